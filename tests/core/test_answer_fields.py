"""Answer fields of the wrong JSON type, decided once in answers.py (issue 7, item 7a).

A `noul` must be a JSON number or boolean: the reference compares it (`noul >= 0.5`) and crashes on
a string, so even "0.7" is the one-line exit-2 usage error naming file:line and the field, and the
store is untouched. `score` and probabilities are read as the reference reads them (`float()`), and a
non-numeric `answer_confidence`/`confidence` is skipped (S2.7): those agree with the reference.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from doubles import SingleModelDouble
from helpers import snapshot_tree, write_jsonl
from laya_cases.core.errors import UsageError
from laya_cases.record.ingest.answers import ingest
from laya_cases.record.recorder import RecordedRun
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

NOUL = {"type": "noul", "instructions": "spam?"}
SCORE = {"type": "score", "instructions": "urgent?", "criteria": ["low", "mid", "high"]}
CHOICE = {"type": "choice", "instructions": "intent?", "criteria": ["a", "b"]}


def _row(i: int, qid: str, body: dict, label, answer: dict) -> dict:
    return {"state": "s%d" % i, "questions": {qid: body}, "expected": {qid: label}, "answers": {qid: answer}}


GOOD = _row(0, "spam", NOUL, True, {"type": "noul", "noul": 0.7})


@pytest.fixture()
def store(tmp_path) -> Path:
    wh = tmp_path / "wh"
    path = write_jsonl(tmp_path / "good.jsonl", [GOOD])
    res = CliRunner().invoke(app, ["ingest", str(path), "-w", str(wh), "--run-id", "base"])
    assert res.exit_code == 0, res.stderr
    return wh


@pytest.mark.parametrize("label", [True, False, "yes", None], ids=["true", "false", "string-label", "null-label"])
@pytest.mark.parametrize("noul", ["0.7", "1", "", None], ids=["str-0.7", "str-1", "empty", "null"])
def test_a_noul_that_is_not_a_number_is_a_usage_error(tmp_path, store, label, noul):
    """Line 2 carries the bad answer: exit 2, one stderr line `<path>:2 answers['spam'].noul ...`."""
    bad = _row(1, "spam", NOUL, label, {"type": "noul", "noul": noul, "answer_confidence": 0.9})
    path = write_jsonl(tmp_path / "answers.jsonl", [GOOD, bad])
    before = snapshot_tree(store)
    res = CliRunner().invoke(app, ["ingest", str(path), "-w", str(store), "--run-id", "never"])
    assert res.exit_code == 2 and res.stdout == "", (res.exit_code, res.stdout, res.exception)
    lines = res.stderr.splitlines()
    assert lines == ["laya-cases: %s:2 answers['spam'].noul must be a number, got %s"
                     % (path, type(noul).__name__)], res.stderr
    assert snapshot_tree(store) == before


def test_a_runner_answer_with_a_string_noul_is_the_same_usage_error(tmp_path):
    """`run` reads a runner's answers through the same rule; nothing is committed."""

    class StringNoul(SingleModelDouble):
        def predict_batch(self, states, questions, **kwargs):
            return [{"answers": {"spam": {"type": "noul", "noul": "0.7"}}} for _ in states]

    data = write_jsonl(tmp_path / "d.jsonl", [{k: v for k, v in GOOD.items() if k != "answers"}])
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(UsageError, match=r"d\.jsonl:1 runner answer\['spam'\]\.noul must be a number, got str$"):
        execute(wh, RunOptions(str(data)), runner=StringNoul())
    assert wh.run_ids() == []


@pytest.mark.parametrize("noul", [True, False, 1, 0, 0.5, math.nan])
def test_numbers_and_booleans_are_still_read(tmp_path, noul):
    """The reference compares these without complaint (True >= 0.5); so do we."""
    rows = [_row(0, "spam", NOUL, True, {"type": "noul", "noul": noul})]
    run = ingest(Warehouse(tmp_path / "wh"), str(write_jsonl(tmp_path / "a.jsonl", rows)), run_id="ok")
    assert run == RecordedRun("ok", 1, 1, 0)


def _differences_from_the_reference(tmp_path, rows):
    from report_path import Store, report_diffs
    from test_differential import case_diffs, reference

    doc = Store(tmp_path).report(rows)
    ref_overall, ref_slices, ref_cases = reference(rows, [])
    return doc, report_diffs(doc, ref_overall, ref_slices) + case_diffs(doc["cases"], ref_cases)


def test_string_score_and_string_confidences_follow_the_reference(tmp_path):
    """A numeric-string `score` is read by `float()` in the reference, a string confidence is skipped
    (S2.7): both are scored, and every shared metric agrees with the reference."""
    rows = [_row(0, "urgency", SCORE, 1, {"type": "score", "score": "1.5", "confidence": "0.9"}),
            _row(1, "intent", CHOICE, "a", {"type": "choice", "choice": "a", "answer_confidence": "0.9",
                                               "probabilities": {"a": "0.8", "b": 0.2}}),
            _row(2, "spam", NOUL, False, {"type": "noul", "noul": 0.2, "confidence": "high"})]
    doc, problems = _differences_from_the_reference(tmp_path, rows)
    assert not problems, problems
    assert doc["overall"]["score_mae"] == 0.5 and doc["overall"]["mean_confidence"] == pytest.approx(0.8)


def test_a_non_numeric_score_is_a_usage_error(tmp_path):
    """`float("high")` crashes the reference's score_mae: the usage error names the field."""
    path = write_jsonl(tmp_path / "a.jsonl", [_row(0, "urgency", SCORE, 1, {"type": "score", "score": "high"})])
    with pytest.raises(UsageError, match=r"a\.jsonl:1 answers\['urgency'\]\.score must be a number, got str$"):
        ingest(Warehouse(tmp_path / "wh"), str(path), run_id="never")


def test_run_and_ingest_return_the_recorded_counts(tmp_path):
    """The recorder's RecordedRun matches the committed run row (the `run` command reads it from there)."""
    rows = [GOOD, {"state": "s1", "questions": {"spam": NOUL}, "expected": {}, "answers": {}}]
    wh = Warehouse(tmp_path / "wh")
    run = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", rows)), run_id="counts")
    row = connect(wh, ["counts"]).execute("SELECT run_id, n_rows, n_cases, n_errors FROM runs").fetchone()
    assert run == RecordedRun(*row) == RecordedRun("counts", 2, 1, 0)
    assert json.loads(connect(wh, ["counts"]).execute("SELECT settings_json FROM runs").fetchone()[0])["answers"] \
        == str(tmp_path / "a.jsonl")


@pytest.mark.parametrize("answers,message", [
    ({"spam": "yes"}, "answers['spam'] must be an answer object such as {\"type\": \"choice\", \"choice\": "
                      "\"refund\"}, got 'yes'"),
    ({"spam": None}, "answers['spam'] must be an answer object such as"),
    ({"ham": {"type": "noul", "noul": 0.7}}, "answers['spam']: no answer for question 'spam' (the row answers: 'ham')"),
    ({}, "answers['spam']: no answer for question 'spam' (the row answers: nothing)"),
])
def test_a_recorded_answer_that_is_not_an_answer_says_what_is_wrong(tmp_path, answers, message):
    """A recorded answers file is not a runner: 'runner returned no answer' would send the user looking
    for a model; the line names the missing question or the value that is not an answer object."""
    path = write_jsonl(tmp_path / "answers.jsonl", [GOOD, dict(GOOD, answers=answers)])
    with pytest.raises(UsageError) as err:
        ingest(Warehouse(tmp_path / "wh"), str(path), run_id="r")
    assert str(err.value).startswith("%s:2 " % path) and message in str(err.value)
    assert not (tmp_path / "wh" / "runs").exists()
