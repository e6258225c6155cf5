"""`laya-cases diff` (issue: gates, part 4; spec S9 case-level diff, S9.5 bootstrap, S8.9 McNemar).

Two runs of one dataset whose answers differ in 7 known cases: the diff must list exactly those 7,
its McNemar p-value must equal scipy's exact binomial test on the same counts, and its paired
bootstrap interval must equal an independent pure-Python computation (CPython
random.Random(0).randrange over dataset rows, numpy's linear quantile) and cover the true delta.
"""
from __future__ import annotations

import json
import math
import random
from typing import Any, Dict, List

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from flip_data import base_correct, rows as flip_rows, write as write_rows
from helpers import snapshot_tree
from multiple_testing import adjust
from laya_cases.query import resample
from laya_cases.report.diff import diff as do_diff
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

N = 40
FLIPS = {("intent", 1), ("intent", 2), ("intent", 5), ("spam", 3), ("spam", 7), ("intent", 11), ("spam", 14)}


def invoke(*args: Any):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Dict[str, Any]:
    base = tmp_path_factory.mktemp("diff")
    wh = base / "wh"
    dataset = write_rows(base / "ds.jsonl", flip_rows(N), answers=False)
    runs = {"a": dict(), "b": dict(flips=FLIPS)}
    for run_id, kwargs in runs.items():
        answers = write_rows(base / ("%s.jsonl" % run_id), flip_rows(N, **kwargs))
        assert invoke("ingest", answers, "--dataset", dataset, "-w", wh, "--run-id", run_id).exit_code == 0
    # answers without the dataset check: a row dropped, one added, one gold label changed
    moved = write_rows(base / "moved.jsonl", flip_rows(N, drop={4}, extra=1, relabel={8}))
    assert invoke("ingest", moved, "-w", wh, "--run-id", "moved").exit_code == 0
    out = base / "diff.json"
    result = invoke("diff", "a", "b", "-w", wh, "--by", "language", "--json", out, "--markdown", base / "diff.md")
    assert result.exit_code == 0, result.stderr
    return {"base": base, "wh": wh, "result": result, "doc": json.loads(out.read_text())}


def truth() -> List[Dict[str, Any]]:
    """Per case (row order, then qid order): row, qid, language, correct in A and B."""
    out = []
    for i in range(N):
        for qid in ("intent", "spam"):
            a = base_correct(qid, i)
            out.append({"row": i, "qid": qid, "language": "de" if i % 3 == 0 else "en",
                        "a": a, "b": a != ((qid, i) in FLIPS)})
    return out


def test_lists_exactly_the_seven_flips(store):
    doc = store["doc"]
    cases = truth()
    flips = {(f["row_index"], f["qid"], f["flip"]) for f in doc["flips"]}
    expected = {(c["row"], c["qid"], "right_to_wrong" if c["a"] else "wrong_to_right") for c in cases if c["a"] != c["b"]}
    assert flips == expected and len(doc["flips"]) == 7
    b = sum(1 for c in cases if c["a"] and not c["b"])
    c_ = sum(1 for c in cases if c["b"] and not c["a"])
    assert (doc["right_to_wrong"], doc["wrong_to_right"]) == (b, c_) == (4, 3)
    assert (doc["compared"], doc["only_in_a"], doc["only_in_b"], doc["paired"]) == (80, 0, 0, 80)
    assert doc["flip_rate"] == 7 / 80 and doc["label_changed"] == 0 and doc["label_drift"] == []
    text = store["result"].stdout
    assert "4 right->wrong, 3 wrong->right over 80 paired cases (flip rate 0.0875)" in text
    assert sum(1 for line in text.splitlines() if line.startswith("  row ")) == 7


def test_mcnemar_equals_scipy_exact_binomial(store):
    doc = store["doc"]
    assert doc["mcnemar_p"] == pytest.approx(binomtest(4, 7, 0.5).pvalue, rel=1e-12)
    for key, group in doc["slices"]["language"].items():
        b, c = group["right_to_wrong"], group["wrong_to_right"]
        expected = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        assert group["mcnemar_p"] == pytest.approx(expected, rel=1e-12), key


@pytest.mark.parametrize("by", ["language", "qid"])
def test_groups_p_values_adjusted_as_numpy_holm_and_bh(store, by):
    doc = store["doc"] if by == "language" else do_diff(Warehouse(store["wh"]), "a", "b", by=by, bootstrap=100)
    groups = sorted(doc["slices"][by].items())
    raw = [g["mcnemar_p"] if g["right_to_wrong"] + g["wrong_to_right"] else None for _k, g in groups]
    for (key, g), (_m, h, b) in zip(groups, adjust(raw)):
        assert g["holm_p"] == pytest.approx(h, rel=1e-15) and g["bh_p"] == pytest.approx(b, rel=1e-15), key
    assert "holm_p" not in doc and "bh_p" not in doc          # the overall test is one test
    if by == "language":
        de = doc["slices"]["language"]["de"]
        line = next(l for l in store["result"].stdout.splitlines() if l.startswith("  language=de"))
        assert line.endswith("p=%.4g holm=%.4g bh=%.4g" % (de["mcnemar_p"], de["holm_p"], de["bh_p"]))


@pytest.mark.slow
def test_margin_marks_an_interval_reaching_both_sides_insufficient(store):
    wh = Warehouse(store["wh"])
    assert store["doc"]["margin"] is None and store["doc"]["insufficient_evidence"] is None
    at = {}
    for margin in (0.0, 0.04, 0.3):
        doc = do_diff(wh, "a", "b", by="language", bootstrap=200, margin=margin)
        assert doc["margin"] == margin
        for g in [doc] + list(doc["slices"]["language"].values()):
            lo, hi = g["ci95"]
            assert g["insufficient_evidence"] is (lo <= -margin and hi >= margin)
        at[margin] = doc["slices"]["language"]
    # de: [-0.107, 0.0] reaches no +0.04 (decided); en: [-0.096, +0.095] reaches both, not +-0.3
    assert (at[0.04]["de"]["insufficient_evidence"], at[0.04]["en"]["insufficient_evidence"]) == (False, True)
    assert at[0.3]["en"]["insufficient_evidence"] is False
    result = invoke("diff", "a", "b", "-w", store["wh"], "--by", "language", "--bootstrap", "200", "--margin", "0.04")
    assert result.exit_code == 0                                # never a failure
    assert "evidence    insufficient at margin 0.0400" in result.stdout
    assert [l.split()[0] for l in result.stdout.splitlines() if l.endswith("  insufficient evidence")] == ["language=en"]


def python_interval(cases: List[Dict[str, Any]], seed: int = 0, replicates: int = 2000) -> List[float]:
    """S9.5 by hand: resample rows with CPython's randrange, delta per replicate, numpy linear quantile."""
    rows = sorted({c["row"] for c in cases})
    by_row: Dict[int, List[Dict[str, Any]]] = {}
    for c in cases:
        by_row.setdefault(c["row"], []).append(c)
    rng = random.Random(seed)
    deltas = []
    for _ in range(replicates):
        drawn = [rows[rng.randrange(len(rows))] for _ in rows]
        picked = [c for r in drawn for c in by_row[r]]
        if picked:
            deltas.append((sum(c["b"] for c in picked) - sum(c["a"] for c in picked)) / len(picked))
    tail = (1.0 - 0.95) / 2.0
    return [float(np.quantile(deltas, tail)), float(np.quantile(deltas, 1.0 - tail))]


def test_bootstrap_interval_is_s9_5_and_covers_the_true_delta(store):
    doc = store["doc"]
    cases = truth()
    true_delta = (sum(c["b"] for c in cases) - sum(c["a"] for c in cases)) / len(cases)
    assert doc["delta"] == true_delta == -1 / 80
    lo, hi = doc["ci95"]
    assert lo <= true_delta <= hi and doc["B_used"] == 2000
    assert doc["ci95"] == pytest.approx(python_interval(cases), abs=1e-12)
    assert doc["bootstrap"] == {"B": 2000, "seed": 0, "level": 0.95, "unit": "row", "n_rows": N}
    de = [c for c in cases if c["language"] == "de"]
    group = doc["slices"]["language"]["de"]
    assert group["paired"] == len(de)
    assert group["delta"] == (sum(c["b"] for c in de) - sum(c["a"] for c in de)) / len(de)
    assert group["accuracy_a"] == sum(c["a"] for c in de) / len(de)


def test_counting_each_replicate_as_drawn_gives_the_same_document(store, monkeypatch):
    """Large runs count each replicate's draws as they come (resample.class_counts): forced on this small
    pair, the document is the same to the byte, every interval included."""
    monkeypatch.setattr(resample, "COUNT_AS_DRAWN", 1)
    monkeypatch.setattr(resample._Words, "CHUNK", 97)           # a replicate's words span chunks
    again = do_diff(Warehouse(store["wh"]), "a", "b", by="language")
    assert json.dumps(again, sort_keys=True) == json.dumps(store["doc"], sort_keys=True)


def test_slice_interval_matches_python(store):
    """A slice's replicates resample all rows; the slice's own cases in each replicate give its delta."""
    cases = truth()
    rows = sorted({c["row"] for c in cases})
    rng = random.Random(0)
    deltas = []
    for _ in range(2000):
        drawn = [rows[rng.randrange(len(rows))] for _ in rows]
        picked = [c for r in drawn for c in cases if c["row"] == r and c["language"] == "en"]
        if picked:
            deltas.append((sum(c["b"] for c in picked) - sum(c["a"] for c in picked)) / len(picked))
    tail = (1.0 - 0.95) / 2.0
    expected = [float(np.quantile(deltas, tail)), float(np.quantile(deltas, 1.0 - tail))]
    group = store["doc"]["slices"]["language"]["en"]
    assert group["ci95"] == pytest.approx(expected, abs=1e-12) and group["B_used"] == len(deltas)


def test_confidence_shift_and_json_keys(store):
    doc = store["doc"]
    for key in ("compared", "only_in_a", "only_in_b", "right_to_wrong", "wrong_to_right", "flips"):
        assert key in doc
    a = flip_rows(N)
    b = flip_rows(N, flips=FLIPS)
    shifts = [rb["answers"][q]["answer_confidence"] - ra["answers"][q]["answer_confidence"]
              for ra, rb in zip(a, b) for q in ("intent", "spam")]
    assert doc["mean_confidence_shift"] == math.fsum(shifts) / len(shifts)
    assert doc["n_confidence"] == 80
    md = (store["base"] / "diff.md").read_text()
    assert "| right -> wrong | 4 |" in md and "### by language" in md and "### flipped cases" in md


def test_only_in_one_run_and_changed_labels(store):
    result = do_diff(Warehouse(store["wh"]), "a", "moved", bootstrap=100)
    assert (result["only_in_a"], result["only_in_b"], result["compared"]) == (2, 2, 78)
    assert result["label_changed"] == 1
    [drift] = result["label_drift"]
    assert (drift["row_index"], drift["qid"], drift["expected_a"], drift["expected_b"]) == (8, "intent", "other", "cancel")
    # the relabelled case was right under the old label and is wrong under the new one
    assert [(f["row_index"], f["qid"], f["label_changed"]) for f in result["flips"]] == [(8, "intent", True)]
    text = invoke("diff", "a", "moved", "-w", store["wh"], "--bootstrap", "100").stdout
    assert "label drift 1 case(s) have a different gold label in B" in text


def test_max_flip_rate_gate(store):
    over = invoke("diff", "a", "b", "-w", store["wh"], "--max-flip-rate", "0.08", "--bootstrap", "100")
    assert over.exit_code == 1
    assert over.stderr.splitlines() == ["FAIL: flip rate 0.0875 (7 of 80 paired cases) is above the maximum 0.0800"]
    assert invoke("diff", "a", "b", "-w", store["wh"], "--max-flip-rate", "0.0875", "--bootstrap", "100").exit_code == 0


@pytest.mark.parametrize("args, needle", [
    (["a", "nope"], "unknown run id 'nope'"),
    (["a", "b", "--by", "row"], "--by must be one of language, model, qid, tag"),
    (["a", "b", "--bootstrap", "10"], "--bootstrap must be an integer in 100..100000"),
    (["a", "b", "--max-flip-rate", "nan"], "--max-flip-rate: 'nan' is not a number"),
    (["a", "b", "--max-flip-rate", "2"], "--max-flip-rate must be a number in [0, 1]"),
    (["a", "b", "--show", "-1"], "--show must be >= 0"),
    (["a", "b", "--margin", "2"], "--margin must be a number in [0, 1]"),
])
def test_usage_errors_exit_2_nothing_written(store, tmp_path, args, needle):
    before = snapshot_tree(store["wh"])
    out = tmp_path / "d.json"
    result = invoke("diff", *args, "-w", store["wh"], "--json", out)
    assert result.exit_code == 2 and result.stdout == "" and not out.exists()
    assert len(result.stderr.splitlines()) == 1 and needle in result.stderr
    assert snapshot_tree(store["wh"]) == before


def test_the_progress_phases_name_each_step_in_order_and_change_nothing(store):
    """`diff` draws a bar on a terminal: the phase callback is told each step as it starts."""
    from laya_cases.harness.diff_blocks import DIFF_BLOCKS

    seen: List[tuple] = []
    wh = Warehouse(store["wh"])
    with_bar = do_diff(wh, "a", "b", bootstrap=100, blocks=DIFF_BLOCKS, phase=lambda *a: seen.append(a))
    assert with_bar == do_diff(wh, "a", "b", bootstrap=100, blocks=DIFF_BLOCKS)
    total = 4 + len(DIFF_BLOCKS)
    counted = [step for _d, _n, step in seen if step.startswith("compare/diff_replicates.sql: ")]
    assert counted and counted[-1] == "compare/diff_replicates.sql: 100 of 100 replicates"   # the stream's batches
    seen = [s for s in seen if s[2] not in counted]
    assert [(done, n) for done, n, _step in seen] == [(i, total) for i in range(total)]
    assert [step for _d, _n, step in seen][:4] == ["compare/diff_slices.sql", "compare/diff_replicates.sql",
                                                   "bootstrap/intervals.sql", "compare/diff_flips.sql"]
