"""Regressions found by the fresh-eyes review: each test failed before its fix.

Bad input is a one-line `laya-cases:` error with exit 2 naming file:line and field, never a
traceback (S1.4, S6.7); numbers and keys follow the reference on the edge cases named per test.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from doubles import ExplodingRunnerDouble
from laya_cases.core.errors import UsageError
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

CHOICE = {"type": "choice", "instructions": "i", "criteria": ["refund", "cancel"]}
SCORE = {"type": "score", "instructions": "i", "criteria": ["low", "high"]}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_s9_6_strict_huge_integer_score_label_is_a_finding_not_a_crash(tmp_path):
    """S9.6: a score label of 10**400 (a JSON integer, not binary64) is out of range: one finding, exit 2.
    `math.isfinite` on such an int raised OverflowError: traceback, exit 1."""
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"state": 1, "questions": {"s": SCORE}, "expected": {"s": 10 ** 400}}) + "\n")
    res = invoke("validate", "--strict", str(data))
    assert res.exit_code == 2, (res.exit_code, res.exception)
    assert "%s:1 expected['s']: score label must be a finite level in [0, 1]" % data in res.stderr
    assert res.stdout == ""


def test_s1_7_run_over_a_lone_surrogate_is_a_usage_error(tmp_path):
    """A dataset line with a lone surrogate escape (JSON "\\ud800") cannot be stored as UTF-8: `run`
    names the line (exit 2) as `ingest` does, instead of a UnicodeEncodeError traceback; nothing is
    committed."""
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"state": "ok", "questions": {"intent": CHOICE}, "expected": {"intent": "refund"}})
                    + "\n" + '{"state": "money \\ud800", "questions": {"intent": %s}, "expected": {"intent": "refund"}}\n'
                    % json.dumps(CHOICE))
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(UsageError, match=r"d\.jsonl:2 .*lone surrogate"):
        execute(wh, RunOptions(str(data)), runner=ExplodingRunnerDouble())
    assert wh.run_ids() == []


def test_s6_10_run_under_skip_says_how_many_records_errored_and_where_to_look(tmp_path):
    """S6.10: a skip run whose every call failed prints no metric (the reference's empty `overall`)
    and exits 0; the commit notice on stderr must say that rows errored and how to list them, or
    the user sees a silent success."""
    from laya_cases.runners import registry

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"state": "BOOM %d" % i, "questions": {"intent": CHOICE},
                                        "expected": {"intent": "refund"}}) + "\n" for i in range(3)))
    registry.register(ExplodingRunnerDouble.name, ExplodingRunnerDouble)
    try:
        res = invoke("run", str(data), "--model", ExplodingRunnerDouble.name, "--on-error", "skip",
                     "--run-id", "allbad", "-w", str(tmp_path / "wh"))
    finally:
        registry.unregister(ExplodingRunnerDouble.name)
    assert res.exit_code == 0 and res.stdout == ""
    notice = res.stderr.splitlines()
    assert len(notice) == 1 and notice[0].startswith("laya-cases: committed run allbad ")
    assert "3 errored record(s)" in notice[0] and "FROM errors WHERE run_id = 'allbad'" in notice[0]


def test_plot_by_a_dimension_without_groups_says_so(tmp_path):
    """`plot RUN --by model` on a run where no case has a model (T3.1 ties.json): the run has paired
    cases, so "has no paired cases" was a false statement; the error names the dimension, and the
    --out directory is not created for a refused plot."""
    from helpers import fixture_rows, write_jsonl
    from laya_cases.record.ingest.answers import ingest

    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", fixture_rows("ties.json"))), run_id="ties")
    out = tmp_path / "plots"
    res = invoke("plot", "ties", "--by", "model", "--out", str(out), "-w", str(wh.root))
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith("laya-cases: ") and len(res.stderr.splitlines()) == 1
    assert "no model group" in res.stderr and "no paired cases" not in res.stderr, res.stderr
    assert not out.exists()
