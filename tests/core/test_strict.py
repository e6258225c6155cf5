"""`validate --strict` (S9.6): every finding with path:line, qid and field; errors exit 2, warnings do not."""
from __future__ import annotations

import pytest

from helpers import write_jsonl
from inprocess import cli


def _row(**over):
    row = {"state": "s", "questions": {
        "intent": {"type": "choice", "instructions": "i", "criteria": ["refund", "cancel"]},
        "spam": {"type": "noul", "instructions": "is it spam?"},
        "urgency": {"type": "score", "instructions": "u", "criteria": ["low", "mid", "high"]}},
        "expected": {"intent": "refund", "spam": False, "urgency": 2}, "language": "en"}
    row.update(over)
    return row


@pytest.mark.slow
def test_clean_dataset_passes_strict_with_the_reference_line(tmp_path):
    path = write_jsonl(tmp_path / "ok.jsonl", [_row(), _row(expected={"intent": "cancel"})])
    proc = cli("validate", str(path), "--strict")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "2 examples, 3 question id(s): intent, spam, urgency\n"


@pytest.mark.slow
def test_s9_6_reports_every_label_error_not_just_the_first(tmp_path):
    bad = _row(expected={"intent": "upgrade", "spam": 1, "urgency": 3})
    path = write_jsonl(tmp_path / "bad.jsonl", [_row(), bad, _row(expected={"urgency": True})])
    proc = cli("validate", str(path), "--strict")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert "%s:2 expected['spam']: noul label must be true or false, got number 1" % path in lines
    assert any(l.startswith("%s:2 expected['intent']: choice label 'upgrade' is not one of the options" % path) for l in lines)
    assert any(l.startswith("%s:2 expected['urgency']: score label must be a finite level in [0, 2]" % path) for l in lines)
    assert any(l.startswith("%s:3 expected['urgency']: score label must be a number, got boolean" % path) for l in lines)
    assert lines[-1] == "laya-cases: %s: 4 error(s) under --strict" % path


@pytest.mark.slow
def test_s9_6_body_checks_and_warnings(tmp_path):
    row = _row(language=5, tags=[1, "vip"], comment="ok", extra_key=1)
    row["questions"]["intent"]["criteria"] = ["a", 1, True]          # 1 and true count as one label
    row["questions"]["spam"]["labels"] = {"false": "x", "true": " x "}
    row["expected"]["intent"] = "a"
    path = write_jsonl(tmp_path / "b.jsonl", [row])
    proc = cli("validate", str(path), "--strict")
    assert proc.returncode == 2
    assert "questions['intent'].criteria: duplicate choice label True" in proc.stderr
    assert "questions['spam'].labels:" in proc.stderr
    assert "warning: %s:1 language: language should be a string, got number 5" % path in proc.stderr
    assert "warning: %s:1 tags[0]: tag should be a string" % path in proc.stderr
    assert "warning: %s:1 extra_key: unknown row key (ignored)" % path in proc.stderr
    assert "comment" not in proc.stderr


@pytest.mark.slow   # CLI runs
def test_warnings_alone_do_not_fail_and_default_validate_is_unchanged(tmp_path):
    path = write_jsonl(tmp_path / "w.jsonl", [_row(language=7, expected={})])
    strict = cli("validate", str(path), "--strict")
    assert strict.returncode == 0 and "warning:" in strict.stderr
    plain = cli("validate", str(path))
    assert plain.returncode == 0 and plain.stderr == ""
    # the reference accepts what strict rejects (S1.5): a mistyped label is not a structural error
    bad = write_jsonl(tmp_path / "x.jsonl", [_row(expected={"spam": 1})])
    assert cli("validate", str(bad)).returncode == 0
    assert cli("validate", str(bad), "--strict").returncode == 2
