"""The reference's summation order without laya (issue 7 item 3; spec S6.4 (e), S9.8).

Against a baseline written by laya-evals, compare re-reads ece/brier/aurc the reference's way
(laya_cases/query/reference_order.py). That must not depend on laya being importable: the verdict of
the golden `compare_reference_doc` is the same with laya blocked, and our functions are bit-equal
to laya.evals' on random inputs with ties.
"""
from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from laya_cases.query import reference_order

GOLDEN = ROOT / "tests" / "golden"
BLOCKED = ("import runpy, sys; sys.modules['laya'] = None; sys.argv = ['laya-cases'] + sys.argv[1:]; "
           "runpy.run_module('laya_cases_cli', run_name='__main__')")


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize("seed", range(40))
def test_bit_equal_to_laya_evals_on_random_inputs_with_ties(seed):
    evals = pytest.importorskip("laya.evals")
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    levels = [round(rng.random(), rng.choice((1, 2, 3))) for _ in range(rng.randint(1, 12))]
    extra = [0.0, 1.0, 1 / 15, 2 / 15, 0.5, float("nan"), 1.5, -0.2]
    confs = [rng.choice(levels) if rng.random() < 0.7 else rng.choice(extra + [rng.random()]) for _ in range(n)]
    corrects = [rng.random() < 0.6 for _ in range(n)]
    cases = [{"confidence": c, "correct": y} for c, y in zip(confs, corrects)]
    ours = reference_order.reference_order_values(cases)
    for name, fn in (("ece", evals.ece), ("brier", evals.brier), ("aurc", evals.aurc)):
        theirs = float(fn(confs, corrects))
        if theirs != theirs:
            assert name not in ours
        else:
            assert _bits(ours[name]) == _bits(theirs), (name, ours[name], theirs)


def test_no_paired_case_is_empty():
    assert reference_order.reference_order_values([{"confidence": None, "correct": True}]) == {}
    assert reference_order.reference_order_values(None) == {}


def test_module_does_not_import_laya(monkeypatch):
    monkeypatch.setitem(sys.modules, "laya", None)
    monkeypatch.setitem(sys.modules, "laya.evals", None)
    cases = [{"confidence": 0.7, "correct": True}, {"confidence": 0.7, "correct": False}]
    assert set(reference_order.reference_order_values(cases)) == {"ece", "brier", "aurc"}


def _cli(args, cwd, env, block):
    argv = ["-c", BLOCKED] if block else ["-m", "laya_cases_cli"]
    return subprocess.run([sys.executable, *argv, *args], cwd=str(cwd), env=env, capture_output=True, text=True)


@pytest.mark.slow   # subprocess
def test_compare_reference_doc_verdict_is_the_same_without_laya(tmp_path: Path):
    env = {**os.environ, "LAYA_CASES_WAREHOUSE": "wh", "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    inputs = GOLDEN / "inputs"
    proc = _cli(["ingest", str(inputs / "support.answers.jsonl"), "--run-id", "support",
                 "--dataset", str(inputs / "support.jsonl")], tmp_path, env, block=False)
    assert proc.returncode == 0, proc.stderr
    args = ["compare", "support", "--baseline", str(inputs / "support.laya_evals.json")]
    blocked = _cli(args, tmp_path, env, block=True)
    assert "laya" not in blocked.stderr.lower() or blocked.returncode == 0, blocked.stderr
    expected = (GOLDEN / "expected" / "compare_reference_doc.out").read_text(encoding="utf-8")
    got = "exit %d\n--- stdout\n%s--- stderr\n%s" % (blocked.returncode, blocked.stdout, blocked.stderr)
    assert got == expected


@pytest.mark.slow   # subprocess
def test_last_bit_differences_still_pass_at_tolerance_0_without_laya(tmp_path: Path):
    """400 random cases whose ece/brier/aurc differ from ours in the last bit when summed in case
    order: a baseline with laya's values (no `extensions`: reference-written) passes at tolerance 0
    with laya blocked in the comparing process."""
    import json

    evals = pytest.importorskip("laya.evals")
    from helpers import last_bit_rows, write_jsonl

    rows = last_bit_rows()
    env = {**os.environ, "LAYA_CASES_WAREHOUSE": "wh", "NO_COLOR": "1"}
    answers = write_jsonl(tmp_path / "answers.jsonl", rows)
    assert _cli(["ingest", str(answers), "--run-id", "r"], tmp_path, env, block=False).returncode == 0
    assert _cli(["report", "r", "--json", "ours.json"], tmp_path, env, block=False).returncode == 0
    ours = json.loads((tmp_path / "ours.json").read_text())
    paired = [(c["confidence"], c["correct"]) for c in ours["cases"] if c["correct"] is not None]
    confs, corrects = [p[0] for p in paired], [p[1] for p in paired]
    baseline = {"config": ours["config"], "overall": dict(ours["overall"])}
    for name, fn in (("ece", evals.ece), ("brier", evals.brier), ("aurc", evals.aurc)):
        baseline["overall"][name] = float(fn(confs, corrects))
    assert any(baseline["overall"][m] != ours["overall"][m] for m in ("ece", "brier", "aurc"))
    (tmp_path / "ref.json").write_text(json.dumps(baseline))
    proc = _cli(["compare", "r", "--baseline", "ref.json"], tmp_path, env, block=True)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout
