"""`laya-cases stability`, `audit` and `relabel` (laya_cases/report/stability.py, report/audit.py,
sql/stability/, sql/audit/, sql/gates/unstable_rate.sql) against a plain-Python oracle written from the
answers themselves: random runs of one dataset with tied predictions, NaN confidences, rows whose call
failed in one run (a runner double), questions one run never answered, a score question (never scored, so
a group with no compared case) and a null language (in no group)."""
from __future__ import annotations

import json
import math
import random
from typing import Any, Dict, List, Optional

import pytest
from typer.testing import CliRunner

from doubles import ExplodingRunnerDouble
from helpers import snapshot_tree, write_jsonl
from laya_cases.core.errors import UsageError
from laya_cases.record.ingest.answers import ingest
from laya_cases.report.audit import queue, relabel, to_csv
from laya_cases.report.stability import SUMMARY_KEYS, stability
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse

pytestmark = pytest.mark.slow          # each store: three ingests and a run of the runner double

LABELS = ["refund", "cancel", "other"]
BODY = {"intent": {"type": "choice", "instructions": "i", "criteria": LABELS},
        "spam": {"type": "noul", "instructions": "s"},
        "urgency": {"type": "score", "instructions": "u", "criteria": ["low", "mid", "high"]}}
QIDS = ["intent", "spam", "urgency"]


def _dataset(n: int, rng: random.Random) -> List[Dict[str, Any]]:
    out = []
    for i in range(n):
        row = {"state": "case %d%s" % (i, " BOOM" if rng.random() < 0.2 else ""), "questions": BODY,
               "expected": {"intent": rng.choice(LABELS), "spam": rng.random() < 0.5, "urgency": rng.randrange(3)}}
        language = rng.choice(["en", "en", "de", "fr", None])
        if language:
            row["language"] = language
        out.append(row)
    return out


def _answers(data, rng: random.Random) -> List[Dict[str, Any]]:
    out = []
    for r in data:
        skill = rng.random()
        pred = r["expected"]["intent"] if rng.random() < skill else rng.choice(LABELS)
        out.append(dict(r, answers={
            "intent": {"type": "choice", "choice": pred, "answer_confidence": rng.choice([0.5, 0.7, 0.9, math.nan])},
            "spam": {"type": "noul", "noul": rng.choice([0.2, 0.5, 0.8])},
            "urgency": {"type": "score", "score": float(rng.randrange(3))}}))
    return out


def _store(tmp_path, seed: int):
    """Three ingested runs and, third in order, the runner double: BOOM rows failed, spam and urgency
    never answered (missing-answer errors), intent always `refund`."""
    rng = random.Random(seed)
    data = _dataset(36, rng)
    wh = Warehouse(tmp_path / "wh")
    answers = {}
    for name in ("a", "b", "c"):
        answers[name] = _answers(data, rng)
        ingest(wh, str(write_jsonl(tmp_path / ("%s.jsonl" % name), answers[name])), run_id=name)
    execute(wh, RunOptions(str(write_jsonl(tmp_path / "data.jsonl", data)), on_error="skip", run_id="d",
                           batch_size=1), runner=ExplodingRunnerDouble())
    answers["d"] = [dict(r, answers={} if "BOOM" in r["state"] else {"intent": {
        "type": "choice", "choice": "refund", "answer_confidence": 0.6}}) for r in data]
    return wh, data, answers


# ---------------------------------------------------------------------------- the oracle
def _outcome(qid: str, answer: Optional[Dict[str, Any]], gold: Any):
    """(status, predicted, correct, confidence) of one run's answer (S2.9), or a failed row."""
    if answer is None:
        return "failed", None, None, None
    if qid == "intent":
        return "scored", answer["choice"], answer["choice"] == gold, answer.get("answer_confidence")
    if qid == "spam":
        verdict = answer["noul"] >= 0.5
        return "scored", "true" if verdict else "false", verdict == gold, max(answer["noul"], 1 - answer["noul"])
    return "unscored", repr(answer["score"]), None, None


def _cases(data, answers, order) -> List[Dict[str, Any]]:
    out = []
    for i, row in enumerate(data):
        for pos, qid in enumerate(QIDS):
            gold = row["expected"][qid]
            runs = [_outcome(qid, answers[r][i]["answers"].get(qid), gold) for r in order]
            scored = [c for s, _, c, _ in runs if s == "scored"]
            preds = [p for _, p, _, _ in runs if p is not None]
            counts = {p: preds.count(p) for p in preds}
            modal = min(counts, key=lambda p: (-counts[p], p)) if preds else None
            out.append({"row": i, "qid": qid, "pos": pos, "language": row.get("language"), "gold": gold, "runs": runs,
                        "n_scored": len(scored), "n_correct": sum(scored), "n_failed": sum(s == "failed" for s, *_ in runs),
                        "modal": modal, "agreement": counts[modal] / len(preds) if preds else None,
                        "p": sum(scored) / len(scored) if scored else None,
                        "compared": len(scored) >= 2, "unstable": 0 < sum(scored) < len(scored)})
    return out


def _summary(cases, order) -> Dict[str, Any]:
    comp = [c for c in cases if c["compared"]]
    n = len(comp)
    acc = []
    for j in range(len(order)):
        got = [c["runs"][j][2] for c in comp if c["runs"][j][0] == "scored"]
        if got:
            acc.append(sum(got) / len(got))
    mean = math.fsum(c["p"] for c in comp) / n if n else None
    sd = math.sqrt(math.fsum(c["p"] * (1 - c["p"]) for c in comp)) / n if n else None
    return {"cases": len(cases), "compared": n, "unstable": sum(c["unstable"] for c in cases),
            "unstable_rate": sum(c["unstable"] for c in comp) / n if n else None,
            "disagreeing": sum(1 for c in comp if c["agreement"] < 1),
            "failed_cases": sum(1 for c in cases if c["n_failed"]),
            "mean_agreement": math.fsum(c["agreement"] for c in comp) / n if n else None,
            "accuracy_mean": mean, "accuracy_sd": sd,
            "expected_low": max(0.0, mean - 1.96 * sd) if n else None,
            "expected_high": min(1.0, mean + 1.96 * sd) if n else None,
            "accuracy_floor": sum(c["n_correct"] == c["n_scored"] for c in comp) / n if n else None,
            "accuracy_ceiling": sum(c["n_correct"] > 0 for c in comp) / n if n else None,
            "run_min": min(acc) if acc else None, "run_max": max(acc) if acc else None,
            "delta_noise": 1.96 * math.sqrt(2 * math.fsum(c["p"] * (1 - c["p"]) for c in comp)) / n if n else None}


def _close(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-12)


@pytest.mark.parametrize("seed", [3, 11])
def test_stability_matches_the_oracle(tmp_path, seed):
    wh, data, answers = _store(tmp_path, seed)
    order = ["b", "a", "d", "c"]
    cases = _cases(data, answers, order)
    for by, key in (("language", "language"), ("qid", "qid")):
        doc = stability(wh, order, by=by)
        want = {"overall": _summary(cases, order)}
        for value in sorted({c[key] for c in cases if c[key] is not None}):
            want[value] = _summary([c for c in cases if c[key] == value], order)
        got = {"overall": doc["overall"], **doc["slices"][by]}
        assert sorted(got) == sorted(want)
        for group in want:
            for k in SUMMARY_KEYS:
                assert _close(got[group][k], want[group][k]), (by, group, k, got[group][k], want[group][k])
    assert doc["slices"]["qid"]["urgency"]["compared"] == 0 and doc["slices"]["qid"]["urgency"]["unstable_rate"] is None
    unstable = sorted((c for c in cases if c["unstable"]), key=lambda c: (c["agreement"], abs(c["p"] - 0.5), c["row"], c["pos"]))
    assert [(u["row_index"], u["qid"]) for u in doc["unstable_cases"]] == [(c["row"], c["qid"]) for c in unstable]
    for u, c in zip(doc["unstable_cases"], unstable):
        assert (u["modal"], u["n_scored"], u["n_correct"], u["n_failed"]) == (c["modal"], c["n_scored"], c["n_correct"], c["n_failed"])
        assert u["predictions"] == [p for _, p, _, _ in c["runs"]]
        assert [x is None and y is None or x == y or (x != x and y != y) for x, y in
                zip(u["confidences"], [f for *_, f in c["runs"]])] == [True] * len(order)


def _queue(cases, order, min_agree: int, top: int) -> List[Dict[str, Any]]:
    out = []
    for c in cases:
        n_runs = sum(1 for s, _, ok, _ in c["runs"] if ok is not None)
        votes: Dict[str, List] = {}
        for j, (_, pred, ok, conf) in enumerate(c["runs"]):
            if ok is False and pred is not None:
                votes.setdefault(pred, []).append((order[j], conf))
        if not votes:
            continue

        def mean(label):
            finite = [f for _, f in votes[label] if f is not None and math.isfinite(f)]
            return math.fsum(finite) / len(finite) if finite else None

        label = min(votes, key=lambda l: (-len(votes[l]), -(mean(l) if mean(l) is not None else -math.inf), l))
        n_agree = len(votes[label])
        if n_agree < min_agree:
            continue
        m = mean(label)
        out.append({"row_index": c["row"], "qid": c["qid"], "pos": c["pos"], "suggested": label, "n_runs": n_runs,
                    "n_agree": n_agree, "mean_confidence": m, "agreeing_runs": [r for r, _ in votes[label]],
                    "score": n_agree / n_runs * (min(1.0, max(0.0, m)) if m is not None else 0.0)})
    out.sort(key=lambda r: (-r["score"], -r["n_agree"], -r["n_runs"], r["row_index"], r["pos"]))
    return out[:top]


@pytest.mark.parametrize("seed", [5])
def test_audit_queue_matches_the_oracle_and_relabels_leave_runs_alone(tmp_path, seed):
    wh, data, answers = _store(tmp_path, seed)
    order = ["c", "d", "a", "b"]
    cases = _cases(data, answers, order)
    for min_agree, top in ((2, 15), (1, 200)):
        got = queue(wh, order, top=top, min_agree=min_agree)["cases"]
        want = _queue(cases, order, min_agree, top)
        assert [(g["row_index"], g["qid"], g["suggested"], g["n_runs"], g["n_agree"], g["agreeing_runs"])
                for g in got] == [(w["row_index"], w["qid"], w["suggested"], w["n_runs"], w["n_agree"],
                                   w["agreeing_runs"]) for w in want]
        assert all(_close(g["score"], w["score"]) and _close(g["mean_confidence"], w["mean_confidence"])
                   for g, w in zip(got, want))
        assert [g["rank"] for g in got] == list(range(1, len(got) + 1))
    assert to_csv({"cases": got}).count("\n") == len(got) + 1

    # accept the top suggestion: the committed files do not change; --relabels reads it, the default does not
    before = snapshot_tree(wh.root / "cases"), snapshot_tree(wh.root / "runs"), snapshot_tree(wh.root / "slice_sets")
    first = next(g for g in got if g["qid"] == "intent")
    made = relabel(wh, "a", first["row_index"], "intent", first["suggested"], note="checked")
    assert made["to_json"] == json.dumps(first["suggested"]) and made["seq"] == 1
    after = snapshot_tree(wh.root / "cases"), snapshot_tree(wh.root / "runs"), snapshot_tree(wh.root / "slice_sets")
    assert after == before
    relabelled = [dict(c) for c in cases]
    for c in relabelled:
        if (c["row"], c["qid"]) == (first["row_index"], "intent"):
            c["runs"] = [(s, p, (p == first["suggested"]) if s == "scored" else None, f) for s, p, _, f in c["runs"]]
            c.update(_cases_fix(c))
    assert _close(stability(wh, order, relabels=True)["overall"]["accuracy_mean"], _summary(relabelled, order)["accuracy_mean"])
    assert _close(stability(wh, order)["overall"]["accuracy_mean"], _summary(cases, order)["accuracy_mean"])
    again = {(g["row_index"], g["qid"]): g for g in queue(wh, order, top=200, min_agree=1, relabels=True)["cases"]}
    entry = again.get((first["row_index"], "intent"))       # now the runs that gave the old label are wrong
    assert entry is None or (entry["expected"] == first["suggested"] and entry["suggested"] != first["suggested"])
    with pytest.raises(UsageError, match="not one of the question's labels"):
        relabel(wh, "a", 0, "intent", "nonsense")
    with pytest.raises(UsageError, match="only choice and noul"):
        relabel(wh, "a", 0, "urgency", "1")
    with pytest.raises(UsageError, match="no case at row 999"):
        relabel(wh, "a", 999, "intent", "refund")


def _cases_fix(c: Dict[str, Any]) -> Dict[str, Any]:
    scored = [ok for s, _, ok, _ in c["runs"] if s == "scored"]
    return {"n_correct": sum(scored), "p": sum(scored) / len(scored), "unstable": 0 < sum(scored) < len(scored)}


def test_refusals_and_the_gate_exit_codes(tmp_path):
    from laya_cases_cli.app import app
    import laya_cases_cli.commands  # noqa: F401

    wh, data, answers = _store(tmp_path, 2)
    ingest(wh, str(write_jsonl(tmp_path / "other.jsonl", _answers(_dataset(5, random.Random(9)), random.Random(1)))),
           run_id="other")
    with pytest.raises(UsageError, match="stability compares runs of one dataset"):
        stability(wh, ["a", "other"])
    with pytest.raises(UsageError, match="named twice"):
        stability(wh, ["a", "a"])
    with pytest.raises(UsageError, match="needs 2 to 20 runs"):
        stability(wh, ["a"])
    rate = stability(wh, ["a", "b"])["overall"]["unstable_rate"]
    cli = CliRunner()
    w = ["-w", str(wh.root)]
    below = cli.invoke(app, ["stability", "a", "b", "--max-unstable-rate", repr(rate)] + w)
    above = cli.invoke(app, ["stability", "a", "b", "--max-unstable-rate", repr(rate * 0.99)] + w)
    bad = cli.invoke(app, ["stability", "a", "b", "--max-unstable-rate", "1.5"] + w)
    assert (below.exit_code, above.exit_code, bad.exit_code) == (0, 1, 2), (below.output, above.output, bad.output)
    assert "FAIL: unstable rate" in above.output and "above the maximum" in above.output
    # urgency alone is never scored: no compared case, and a missing measurement never passes
    assert cli.invoke(app, ["audit", "--runs", "a,b", "--runs", "c", "--top", "3"] + w).exit_code == 0
    assert cli.invoke(app, ["relabel", "a", "--row", "0"] + w).exit_code == 2


def test_report_relabels_read_the_corrected_labels(tmp_path):
    """The planted copy of the support answers, with its two wrong labels relabelled, reports exactly what
    the run over the true labels reports: every metric, slice, bootstrap interval and case."""
    from helpers import ROOT
    from laya_cases_cli.app import app
    import laya_cases_cli.commands  # noqa: F401

    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(ROOT / "data" / "support.minilm.answers.jsonl"), run_id="true")
    ingest(wh, str(ROOT / "data" / "support.minilm.planted.answers.jsonl"), run_id="planted")
    relabel(wh, "planted", 2, "intent", "cancel")      # the latest relabel of a case is the one read
    relabel(wh, "planted", 6, "spam", "false")
    relabel(wh, "planted", 2, "intent", "delivery")
    cli = CliRunner()
    docs = {}
    for name, args in (("true", ["true"]), ("fixed", ["planted", "--relabels"]), ("planted", ["planted"])):
        out = tmp_path / ("%s.json" % name)
        got = cli.invoke(app, ["report", *args, "--slice", "language", "--bootstrap", "200", "--json", str(out),
                               "-w", str(wh.root)])
        assert got.exit_code == 0, got.output
        docs[name] = json.loads(out.read_text())
    for key in ("overall", "slices", "cases"):
        assert docs["fixed"][key] == docs["true"][key], key
    assert docs["planted"]["overall"] != docs["true"]["overall"]
    fixed, true = (dict(docs[n]["extensions"], run=None) for n in ("fixed", "true"))
    assert fixed == true and '"ci"' in json.dumps(true)
