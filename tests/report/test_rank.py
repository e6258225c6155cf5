"""`laya-cases rank` (laya_cases/report/rank.py, sql/compare/rank_*.sql) against a plain-Python ranking:
the S9.5 draws over the union of the runs' rows, each replicate's accuracies, competition ranks, numpy's
percentiles and the leaderboard's tie groups; on random runs with tied values, a run missing rows (its
answers failed) and small language groups a replicate can miss."""
from __future__ import annotations

import json
import random
from typing import Any, Dict, List, Optional

import numpy as np
import pytest
from typer.testing import CliRunner

from doubles import ExplodingRunnerDouble
from helpers import write_jsonl
from laya_cases.core.errors import UsageError
from laya_cases.record.ingest.answers import ingest
from laya_cases.report.rank import groups, rank
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse

BODY = {"intent": {"type": "choice", "instructions": "i", "criteria": ["refund", "cancel", "other"]}}
LABELS = ["refund", "cancel", "other"]


def _dataset(k: int, rng: random.Random) -> List[Dict[str, Any]]:
    """States the runner double reads: "BOOM" fails its call (the row has no case in that run)."""
    return [{"state": "case %d%s" % (i, " BOOM" if rng.random() < 0.15 else ""), "questions": BODY,
             "expected": {"intent": rng.choice(LABELS)}, "language": rng.choice(["en", "en", "en", "de", "fr"])}
            for i in range(k)]


def _answers(rows, skill: float, rng: random.Random) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        gold = r["expected"]["intent"]
        pred = gold if rng.random() < skill else rng.choice(LABELS)
        out.append(dict(r, answers={"intent": {"type": "choice", "choice": pred,
                                               "answer_confidence": rng.choice([0.5, 0.7, 0.9])}}))
    return out


def _store(tmp_path, seed: int, skills):
    """Two ingested runs of random skill and one of the runner double, whose BOOM rows failed (skipped)."""
    rng = random.Random(seed)
    data = _dataset(40, rng)
    wh = Warehouse(tmp_path / "wh")
    runs = {}
    for i, skill in enumerate(skills):
        answers = _answers(data, skill, rng)
        ingest(wh, str(write_jsonl(tmp_path / ("r%d.jsonl" % i), answers)), run_id="r%d" % i)
        runs["r%d" % i] = answers
    execute(wh, RunOptions(str(write_jsonl(tmp_path / "data.jsonl", data)), on_error="skip", run_id="double"),
            runner=ExplodingRunnerDouble())
    runs["double"] = [dict(r, answers={} if "BOOM" in r["state"] else {
        "intent": {"type": "choice", "choice": "refund"}}) for r in data]
    return wh, data, runs


def _accuracy(answers, sample, keep) -> Optional[float]:
    hits = [answers[i]["answers"]["intent"]["choice"] == answers[i]["expected"]["intent"]
            for i in sample if answers[i]["answers"] and keep(answers[i])]
    return sum(hits) / len(hits) if hits else None


def _competition(values: List[float]) -> List[int]:
    return [1 + sum(1 for w in values if w > v) for v in values]


def _oracle(data, runs: Dict[str, List], B: int, seed: int, keep):
    """Per run: point value, value interval, rank, rank interval; per pair: the difference interval."""
    ids = list(runs)
    rows = sorted({i for a in runs.values() for i, r in enumerate(a) if r["answers"]})
    rng = random.Random(seed)
    per_rep = []
    for _ in range(B):
        sample = [rows[rng.randrange(len(rows))] for _ in range(len(rows))]
        per_rep.append([_accuracy(runs[r], sample, keep) for r in ids])
    q = lambda xs: None if len(xs) < 2 else [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))]
    full = [v for v in per_rep if all(x is not None for x in v)]
    ranks = [_competition(v) for v in full]
    point = [_accuracy(runs[r], range(len(data)), keep) for r in ids]
    out = {}
    for k, rid in enumerate(ids):
        out[rid] = {"value": point[k], "ci": q([v[k] for v in per_rep if v[k] is not None]),
                    "rank": _competition(point)[k], "rank_ci": q([r[k] for r in ranks])}
    diffs = {(i, j): q([v[i] - v[j] for v in full]) for i in range(len(ids)) for j in range(i + 1, len(ids))}
    return out, diffs


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return all(abs(x - y) <= 1e-12 for x, y in zip(a, b))


@pytest.mark.parametrize("seed,skills", [(1, (0.8, 0.5)), pytest.param(2, (0.6, 0.6), marks=pytest.mark.slow),
                                         pytest.param(3, (0.9, 0.3), marks=pytest.mark.slow)])
def test_rank_is_the_plain_python_ranking(tmp_path, seed, skills):
    wh, data, runs = _store(tmp_path, seed, skills)
    doc = rank(wh, list(runs), by="language", bootstrap=200, seed=seed)
    cells = [("overall", lambda r: True, doc["metrics"]["choice_accuracy"]["overall"])]
    cells += [(lang, (lambda lang: lambda r: r["language"] == lang)(lang), rows)
              for lang, rows in doc["metrics"]["choice_accuracy"]["language"].items()]
    assert {c[0] for c in cells} == {"overall", "en", "de", "fr"}
    for where, keep, rows in cells:
        want, diffs = _oracle(data, runs, 200, seed, keep)
        ids = list(runs)
        assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
        for r in rows:
            w = want[r["run_id"]]
            assert r["value"] == w["value"] and r["rank"] == w["rank"], (where, r)
            assert _close(r["ci"], w["ci"]) and _close(r["rank_ci"], w["rank_ci"]), (where, r, w)

        def significant(a: str, b: str) -> bool:
            i, j = sorted((ids.index(a), ids.index(b)))
            d = diffs[(i, j)]
            return d is not None and (d[0] > 0 or d[1] < 0)
        order = [r["run_id"] for r in rows]
        assert [r["group"] for r in rows] == [groups(order, significant)[o] for o in order], where
        assert [r["tied_with"] for r in rows] == [[o for o in order if o != r["run_id"] and not significant(
            r["run_id"], o)] for r in rows]
        assert order == sorted(ids, key=lambda i: (-want[i]["value"], ids.index(i)))


@pytest.mark.slow
def test_the_oracle_can_tell_a_wrong_draw(tmp_path):
    """Another seed gives other intervals: the comparison above is not vacuous."""
    wh, data, runs = _store(tmp_path, 1, (0.8, 0.5))
    doc = rank(wh, list(runs), bootstrap=200, seed=1)
    want, _ = _oracle(data, runs, 200, 2, lambda r: True)
    assert any(not _close(r["ci"], want[r["run_id"]]["ci"]) for r in doc["metrics"]["choice_accuracy"]["overall"])


def test_refusals_name_what_is_wrong(tmp_path):
    wh, data, runs = _store(tmp_path, 1, (0.8, 0.5))
    other = [dict(r, state=r["state"] + " again") for r in runs["r0"]]
    ingest(wh, str(write_jsonl(tmp_path / "other.jsonl", other)), run_id="other")
    for ids, kwargs, message in ((["r0"], {}, "rank needs 2 to 20 runs, got 1"),
                                 (["r0", "r0"], {}, "run r0 is named twice"),
                                 (["r0", "r1"], {"by": "colour"}, "--by must be one of"),
                                 (["r0", "r1"], {"bootstrap": 0}, "ranks need intervals"),
                                 (["r0", "other"], {}, "rank compares runs of one dataset: run r0 has labelled rows"),
                                 (["r0", "nope"], {}, "unknown run id 'nope'")):
        with pytest.raises(UsageError, match=message):
            rank(wh, ids, **kwargs)


@pytest.mark.slow
def test_cli_prints_tables_and_writes_the_same_json_each_time(tmp_path):
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app

    wh, _, _ = _store(tmp_path, 3, (0.9, 0.3))
    outs = []
    for name in ("a.json", "b.json"):
        result = CliRunner().invoke(app, ["rank", "r0", "r1", "double", "--bootstrap", "100", "-w", str(wh.root),
                                          "--json", str(tmp_path / name), "--markdown", str(tmp_path / "r.md")])
        assert result.exit_code == 0, result.output
        outs.append(result.stdout)
    assert outs[0] == outs[1] and "choice_accuracy, overall" in outs[0] and "tied with" in outs[0]
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["runs"] == ["r0", "r1", "double"] and doc["bootstrap"] == 100
    assert (tmp_path / "r.md").read_text().startswith("# Rank of r0, r1, double")
    bad = CliRunner().invoke(app, ["rank", "r0", "-w", str(wh.root)])
    assert bad.exit_code == 2
