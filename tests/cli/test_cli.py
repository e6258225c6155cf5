"""The command line's contract (issue: foundation).

Bad input anywhere: exactly one line on stderr, `laya-cases: ` first, naming file:line and the field
where there is one; exit 2; nothing on stdout; the warehouse byte-for-byte unchanged (S1.4, and
the store rule in README). Good input: the S1.6 validate line, runs/sql in three formats, store
selection by --warehouse or LAYA_CASES_WAREHOUSE, report files, --help everywhere, ingest identity
(S5.1, S5.2, docs/identity.md).

Most cases run in-process through typer's CliRunner (fast, same code path as the entry point);
`test_in_process_matches_the_real_entry_point` checks on a sample that a real `python -m
laya_cases_cli` process prints the same.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
import typer
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree, write_jsonl
from laya_cases_cli.app import app

DATASET = ROOT / "data" / "support.jsonl"
ANSWERS = ROOT / "data" / "support.answers.jsonl"


def invoke(*args: str, env: Optional[Dict[str, str]] = None):
    return CliRunner().invoke(app, list(args), env=env)


def assert_usage_error(result, *needles: str) -> str:
    """Exit 2, nothing on stdout, exactly one stderr line with the prefix and every needle."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stderr.endswith("\n"), result.stderr
    assert lines[0].startswith("laya-cases: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("store") / "wh"
    result = invoke("ingest", str(ANSWERS), "--dataset", str(DATASET), "-w", str(wh), "--run-id", "base")
    assert result.exit_code == 0, result.stderr
    return wh


@pytest.fixture()
def unchanged(store):
    """Asserts after the test that the store's tree (paths, sizes, sha256) did not change."""
    before = snapshot_tree(store)
    assert any(p.endswith(".parquet") for p in before)
    yield store
    assert snapshot_tree(store) == before


# ---------------------------------------------------------------------------- rows to write
QUESTIONS = {"c": {"type": "choice", "instructions": "i", "criteria": ["a", "b"]},
             "n": {"type": "noul", "instructions": "i"},
             "s": {"type": "score", "instructions": "i", "criteria": ["x", "y", "z"]}}


def good_row(i: int = 0, **changes) -> dict:
    row = {"state": "s%d" % i, "questions": QUESTIONS, "expected": {"c": "a", "n": True, "s": 1},
           "answers": {"c": {"type": "choice", "choice": "a", "answer_confidence": 0.8},
                       "n": {"type": "noul", "noul": 0.7}, "s": {"type": "score", "score": 1.2}},
           "latency_ms": 3.5}
    row.update(changes)
    return row


def with_answer(qid: str, answer) -> dict:
    row = good_row(1)
    row["answers"] = dict(row["answers"], **{qid: answer})
    return row


def write_lines(path: Path, lines: List[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


GOOD = json.dumps(good_row())

# (id, file lines, needles after "<path>"): structural checks of S1.4 in their order; every one is
# also what `ingest` says, since an answers file is a dataset first.
DATASET_ERRORS = [
    ("malformed-json", [GOOD, "# a comment", "", '{"state": '], ":4 is not valid JSON"),
    ("bom", ["\ufeff" + GOOD], ":1 is not valid JSON"),
    ("non-object-row", [GOOD, "[1, 2]"], ":2 must be an object, got list"),
    ("string-row", ['"text"'], ":1 must be an object, got str"),
    ("missing-state", [json.dumps({"questions": {}, "expected": {}})], ":1 is missing 'state'"),
    ("missing-questions", [json.dumps({"state": 1, "expected": {}})], ":1 is missing 'questions'"),
    ("missing-expected", [json.dumps({"state": 1, "questions": {}})], ":1 is missing 'expected'"),
    ("questions-not-object", [json.dumps({"state": 1, "questions": [], "expected": {}})],
     ":1 'questions' must be an object"),
    ("expected-not-object", [json.dumps({"state": 1, "questions": {}, "expected": "a"})],
     ":1 'expected' must be an object keyed by question id"),
    ("expected-unknown-qid", [GOOD, json.dumps(good_row(1, expected={"c": "a", "zz": 1, "yy": 2}))],
     ":2 'expected' names unknown question(s): yy, zz"),
    ("tags-not-list", [json.dumps(good_row(tags="vip"))], ":1 'tags' must be a list"),
]


@pytest.mark.parametrize("lines,needle", [(l, n) for _, l, n in DATASET_ERRORS],
                         ids=[i for i, _, _ in DATASET_ERRORS])
def test_bad_dataset_rows_validate_and_ingest(tmp_path, unchanged, lines, needle):
    """S1.4 #2-#8: the first failure, named path:line, from both `validate` and `ingest`."""
    path = write_lines(tmp_path / "bad.jsonl", lines)
    assert_usage_error(invoke("validate", str(path)), str(path) + needle)
    assert_usage_error(invoke("ingest", str(path), "-w", str(unchanged)), str(path) + needle)


def _unreadable(tmp_path: Path, kind: str) -> Path:
    if kind == "missing":
        return tmp_path / "no-such-file.jsonl"
    if kind == "directory":
        (tmp_path / "adir").mkdir()
        return tmp_path / "adir"
    if kind == "not-utf8":
        path = tmp_path / "latin1.jsonl"
        path.write_bytes(GOOD.replace("s0", "caf\u00e9").encode("latin-1") + b"\n")
        return path
    if kind == "empty":
        return write_lines(tmp_path / "empty.jsonl", ["# nothing but a comment", "   ", ""])
    if kind == "zero-bytes":
        path = tmp_path / "zero.jsonl"
        path.write_bytes(b"")
        return path
    raise AssertionError(kind)


@pytest.mark.parametrize("kind,needle", [("missing", " cannot be read: "), ("directory", " cannot be read: "),
                                         ("not-utf8", " cannot be read: "), ("empty", " contains no examples"),
                                         ("zero-bytes", " contains no examples")])
def test_unreadable_or_empty_file(tmp_path, unchanged, kind, needle):
    """S1.4 #1 and #9: the path is named; the store is not touched."""
    path = _unreadable(tmp_path, kind)
    assert_usage_error(invoke("validate", str(path)), str(path) + needle)
    assert_usage_error(invoke("ingest", str(path), "-w", str(unchanged)), str(path) + needle)
    assert_usage_error(invoke("ingest", str(ANSWERS), "--dataset", str(path), "-w", str(unchanged)), str(path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_permission_denied(tmp_path, unchanged):
    path = write_lines(tmp_path / "locked.jsonl", [GOOD])
    path.chmod(0)
    assert_usage_error(invoke("ingest", str(path), "-w", str(unchanged)), str(path) + " cannot be read: ")


# (id, bad row on line 2, needle after "<path>:2"): answer and call fields the metrics read.
ANSWER_ERRORS = [
    ("answers-missing", {k: v for k, v in good_row(1).items() if k != "answers"}, " 'answers' must be an object"),
    ("answers-not-object", good_row(1, answers=[1, 2]), " 'answers' must be an object"),
    ("answer-missing-for-qid", good_row(1, answers={"c": {"type": "choice", "choice": "a"},
                                                     "s": {"type": "score", "score": 1}}), " answers['n']"),
    ("answer-not-object", with_answer("n", 0.7), " answers['n']"),
    ("noul-not-number", with_answer("n", {"type": "noul", "noul": "x"}), " answers['n'].noul must be a number"),
    ("score-null-numeric-label", with_answer("s", {"type": "score", "score": None}),
     " answers['s'].score must be a number"),
    ("probability-not-number", with_answer("c", {"type": "choice", "choice": "a", "probabilities": {"a": "x"}}),
     " answers['c'].probabilities['a'] must be a number"),
    ("confidence-beyond-binary64", with_answer("c", {"type": "choice", "choice": "a", "answer_confidence": 10 ** 400}),
     " answers['c'].answer_confidence is too large"),
    ("score-beyond-binary64", with_answer("s", {"type": "score", "score": 10 ** 400}),
     " answers['s'].score is too large"),
    ("lone-surrogate-in-state", good_row(1, state="\ud800"), " contains a lone surrogate"),
    ("lone-surrogate-in-answer", with_answer("c", {"type": "choice", "choice": "\udc00"}),
     " answers['c'] contains a lone surrogate"),
    ("latency-negative", good_row(1, latency_ms=-1), " 'latency_ms' must be a finite number >= 0"),
    ("latency-string", good_row(1, latency_ms="5"), " 'latency_ms' must be a finite number >= 0"),
    ("latency-bool", good_row(1, latency_ms=True), " 'latency_ms' must be a finite number >= 0"),
    ("latency-nan", good_row(1, latency_ms=float("nan")), " 'latency_ms' must be a finite number >= 0"),
    ("latency-inf", good_row(1, latency_ms=float("inf")), " 'latency_ms' must be a finite number >= 0"),
    ("latency-huge-int", good_row(1, latency_ms=10 ** 400), " 'latency_ms' must be a finite number >= 0"),
]


@pytest.mark.parametrize("row,needle", [(r, n) for _, r, n in ANSWER_ERRORS], ids=[i for i, _, _ in ANSWER_ERRORS])
def test_bad_answers_name_line_and_field(tmp_path, unchanged, row, needle):
    """S2.4/S2.7-S2.9 answer fields the metrics would read (or crash on), and S3.15 latency."""
    path = write_lines(tmp_path / "answers.jsonl", [GOOD, json.dumps(row)])   # ASCII escapes keep \ud800 writable
    assert_usage_error(invoke("ingest", str(path), "-w", str(unchanged), "--run-id", "never"), "%s:2%s" % (path, needle))


def test_score_null_with_a_non_numeric_label_is_not_an_error(tmp_path):
    """S3.6 reads `score` only when the label is a number (S3.2); the reference never touches it otherwise."""
    row = good_row(1, expected={"c": "a", "n": True, "s": "high"})
    row["answers"]["s"] = {"type": "score", "score": None}
    path = write_jsonl(tmp_path / "answers.jsonl", [row])
    result = invoke("ingest", str(path), "-w", str(tmp_path / "wh"), "--run-id", "ok")
    assert result.exit_code == 0, result.stderr


# ---------------------------------------------------------------------------- --dataset pairing
def _answer_lines() -> List[str]:
    return ANSWERS.read_text(encoding="utf-8").splitlines()


def _data_line_numbers(lines: List[str]) -> List[int]:
    return [i for i, l in enumerate(lines, 1) if l.strip() and not l.strip().startswith("#")]


@pytest.mark.parametrize("field", ["expected", "tags", "state", "questions"])
def test_dataset_mismatch_names_the_field(tmp_path, unchanged, field):
    lines = _answer_lines()
    line_no = _data_line_numbers(lines)[3]
    row = json.loads(lines[line_no - 1])
    if field == "expected":
        row["expected"]["spam"] = not row["expected"]["spam"]
    elif field == "tags":
        row["tags"] = ["changed"]
    elif field == "state":
        row["state"] += "!"
    else:
        row["questions"]["spam"]["instructions"] = "changed"
    lines[line_no - 1] = json.dumps(row)
    path = write_lines(tmp_path / "answers.jsonl", lines)
    assert_usage_error(invoke("ingest", str(path), "--dataset", str(DATASET), "-w", str(unchanged)),
                       "%s:%d does not match dataset row %s:" % (path, line_no, DATASET), "field '%s' differs" % field)


def test_answers_with_more_rows_than_the_dataset(tmp_path, unchanged):
    lines = DATASET.read_text(encoding="utf-8").splitlines()
    last = _data_line_numbers(lines)[-1]
    short = write_lines(tmp_path / "short.jsonl", lines[:last - 1])
    assert_usage_error(invoke("ingest", str(ANSWERS), "--dataset", str(short), "-w", str(unchanged)),
                       "%s:%d has more rows than the dataset %s" % (ANSWERS, last, short))


def test_answers_with_fewer_rows_than_the_dataset(tmp_path, unchanged):
    lines = _answer_lines()
    path = write_lines(tmp_path / "fewer.jsonl", lines[:_data_line_numbers(lines)[-1] - 1])
    assert_usage_error(invoke("ingest", str(path), "--dataset", str(DATASET), "-w", str(unchanged)),
                       "%s has fewer rows than the dataset %s" % (path, DATASET))


def test_ingest_refuses_an_existing_run_id(unchanged):
    assert_usage_error(invoke("ingest", str(ANSWERS), "-w", str(unchanged), "--run-id", "base"),
                       "run id 'base' already exists")


# ---------------------------------------------------------------------------- report / runs / sql flags
@pytest.mark.parametrize("args,needles", [
    (["report", "nope"], ["unknown run id 'nope'", "known runs: base"]),
    (["report", "--", "-x"], ["invalid run id '-x'"]),
    (["report", "../base"], ["invalid run id '../base'"]),
    (["report", "base", "--slice", "bogus"], ["--slice must be one of", "'bogus'"]),
    (["report", "base", "--score-within", "nan"], ["score_within tolerance must be finite and >= 0", "nan"]),
    (["report", "base", "--score-within", "-1"], ["score_within tolerance must be finite and >= 0", "-1"]),
    (["report", "base", "--score-within", "inf"], ["score_within tolerance must be finite and >= 0", "inf"]),
    (["report", "base", "--coverage", "0"], ["coverage must be a number in (0, 1]", "0.0"]),
    (["report", "base", "--coverage", "1.5"], ["coverage must be a number in (0, 1]", "1.5"]),
    (["report", "base", "--coverage", "nan"], ["coverage must be a number in (0, 1]", "nan"]),
    (["runs", "--format", "xml"], ["--format must be table, csv or json", "'xml'"]),
    (["sql", "SELECT 1", "--format", "yaml"], ["--format must be table, csv or json", "'yaml'"]),
    (["sql", "SELEC run_id FROM runs"], ["query failed: Parser Error", "SELEC"]),
    (["sql", "SELECT nope FROM cases"], ["query failed: Binder Error", "nope"]),
    (["sql", "SELECT * FROM no_such_table"], ["query failed: Catalog Error", "no_such_table"]),
    (["sql", ""], ["the query contains no SQL statement"]),
    (["sql", "  -- only a comment"], ["the query contains no SQL statement"]),
], ids=["unknown-run", "dash-run", "dotdot-run", "slice", "score-within-nan", "score-within-negative",
        "score-within-inf", "coverage-0", "coverage-1.5", "coverage-nan", "runs-format", "sql-format", "sql-parse",
        "sql-binder", "sql-catalog", "sql-empty", "sql-comment"])
def test_bad_flags_and_queries(unchanged, args, needles):
    assert_usage_error(invoke(args[0], "-w", str(unchanged), *args[1:]), *needles)


@pytest.mark.parametrize("args", [
    ["ingest", "{bad}", "-w", "{wh}", "--run-id", "x"],
    ["sql", "SELEC 1", "-w", "{wh}"],
    ["report", "nope", "-w", "{wh}", "--slice", "language"],
])
def test_in_process_matches_the_real_entry_point(tmp_path, unchanged, args):
    """The CliRunner results above are what a user's process prints (no stray warnings, same exit)."""
    bad = write_lines(tmp_path / "bad.jsonl", [GOOD, "{"])
    args = [a.format(bad=bad, wh=unchanged) for a in args]
    proc = subprocess.run([sys.executable, "-m", "laya_cases_cli", *args], capture_output=True, text=True, cwd=str(ROOT))
    inproc = invoke(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (inproc.exit_code, inproc.stdout, inproc.stderr)
    assert_usage_error(inproc)


# ---------------------------------------------------------------------------- good input
def test_validate_line_S1_6(tmp_path):
    result = invoke("validate", str(DATASET))
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == "16 examples, 3 question id(s): intent, spam, urgency\n"
    # no singular form; qids of every row's questions (not only expected), sorted by code point
    path = write_jsonl(tmp_path / "one.jsonl", [{"state": None, "questions": {"b": {}, "a": 1, "B": {}},
                                                 "expected": {}}])
    assert invoke("validate", str(path)).stdout == "1 examples, 3 question id(s): B, a, b\n"


def test_runs_in_three_formats(store):
    as_json = json.loads(invoke("runs", "-w", str(store), "--format", "json").stdout)
    assert [(r["run_id"], r["n_rows"], r["n_cases"], r["n_errors"]) for r in as_json] == [("base", 16, 48, 0)]
    as_csv = list(csv.DictReader(io.StringIO(invoke("runs", "-w", str(store), "--format", "csv").stdout)))
    assert [(r["run_id"], r["n_cases"], r["kind"]) for r in as_csv] == [("base", "48", "ingest")]
    assert set(as_csv[0]) == set(as_json[0])
    table = invoke("runs", "-w", str(store))
    assert table.exit_code == 0 and "base" in table.stdout and "cases/err" in table.stdout and "48/0" in table.stdout


def test_runs_of_an_empty_or_missing_store(tmp_path):
    result = invoke("runs", "-w", str(tmp_path / "none"), "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert not (tmp_path / "none").exists()


def test_sql_in_three_formats(store):
    query = "SELECT qid, count(*) AS n, sum(correct::INT) AS hits FROM cases GROUP BY qid ORDER BY qid"
    as_json = json.loads(invoke("sql", query, "-w", str(store), "--format", "json").stdout)
    assert [r["qid"] for r in as_json] == ["intent", "spam", "urgency"]
    assert [r["n"] for r in as_json] == [16, 16, 16]
    as_csv = invoke("sql", query, "-w", str(store), "--format", "csv").stdout.splitlines()
    assert as_csv[0] == "qid,n,hits"
    assert as_csv[1:] == ["%s,%s,%s" % (r["qid"], r["n"], "" if r["hits"] is None else r["hits"]) for r in as_json]
    table = invoke("sql", query, "-w", str(store)).stdout
    assert all(q in table for q in ("intent", "spam", "urgency"))


def test_warehouse_option_and_environment_choose_the_store(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert invoke("ingest", str(ANSWERS), "-w", str(a), "--run-id", "in-a").exit_code == 0
    assert invoke("ingest", str(ANSWERS), "--run-id", "in-b", env={"LAYA_CASES_WAREHOUSE": str(b)}).exit_code == 0

    def ids(*args, env=None):
        result = invoke("runs", "--format", "json", *args, env=env)
        assert result.exit_code == 0, result.stderr
        return [r["run_id"] for r in json.loads(result.stdout)]

    assert ids("-w", str(a)) == ["in-a"]
    assert ids("--warehouse", str(b)) == ["in-b"]
    assert ids(env={"LAYA_CASES_WAREHOUSE": str(b)}) == ["in-b"]
    assert ids("-w", str(a), env={"LAYA_CASES_WAREHOUSE": str(b)}) == ["in-a"]     # the flag wins
    sql = invoke("sql", "SELECT DISTINCT run_id FROM cases", "--format", "csv", env={"LAYA_CASES_WAREHOUSE": str(a)})
    assert sql.stdout == "run_id\nin-a\n"


def test_warehouse_before_the_command_name_is_the_commands(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, run in ((a, "in-a"), (b, "in-b")):
        assert invoke("ingest", str(ANSWERS), "-w", str(root), "--run-id", run).exit_code == 0
    monkeypatch.delenv("LAYA_CASES_WAREHOUSE", raising=False)

    def ids(*args, env=None):
        result = invoke(*args, "--format", "json", env=env)
        assert result.exit_code == 0, result.stderr
        return [r["run_id"] for r in json.loads(result.stdout)]

    assert ids("-w", str(a), "runs") == ["in-a"]
    assert ids("--warehouse=%s" % b, "runs") == ["in-b"]
    assert ids("-w", str(a), "runs", env={"LAYA_CASES_WAREHOUSE": str(b)}) == ["in-a"]   # beats the variable
    assert ids("-w", str(a), "runs", "-w", str(b)) == ["in-b"]                          # the command's own wins
    assert "LAYA_CASES_WAREHOUSE" not in os.environ                  # put back: this process keeps its own
    empty = invoke("-w", "", "runs")
    assert empty.exit_code == 2 and "the warehouse path is empty" in empty.stderr
    # (tests/cli/test_startup.py: the console script still takes the light path of `runs` behind it)


def test_report_writes_json_and_markdown(store, tmp_path):
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    result = invoke("report", "base", "-w", str(store), "--json", str(out_json), "--markdown", str(out_md),
                    "--slice", "language")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(out_json.read_text())
    assert set(doc) == {"config", "overall", "slices", "cases", "extensions"}
    assert len(doc["cases"]) == 48 and doc["extensions"]["run"]["run_id"] == "base"
    assert "choice_accuracy %.4f" % doc["overall"]["choice_accuracy"] in " ".join(result.stdout.split())
    assert "language=en" in result.stdout
    md = out_md.read_text()
    assert md.startswith("| metric | value |\n|---|---|\n")
    assert "| choice_accuracy | %.4f |" % doc["overall"]["choice_accuracy"] in md
    assert "### by language" in md


def _command_names() -> List[str]:
    return sorted(typer.main.get_command(app).commands)


@pytest.mark.slow
def test_help_of_every_command():
    names = _command_names()
    assert {"validate", "ingest", "runs", "report", "sql", "gc"} <= set(names)
    for name in names:
        result = invoke(name, "--help")
        assert result.exit_code == 0, (name, result.stderr)
        assert "Usage" in result.stdout and name in result.stdout
    top = subprocess.run([sys.executable, "-m", "laya_cases_cli", "--help"], capture_output=True, text=True,
                         cwd=str(ROOT))
    assert top.returncode == 0 and all(n in top.stdout for n in names)


# ---------------------------------------------------------------------------- identity (S5, docs/identity.md)
def _report(wh: Path, run_id: str, tmp_path: Path) -> dict:
    out = tmp_path / ("%s.json" % run_id)
    result = invoke("report", run_id, "-w", str(wh), "--json", str(out))
    assert result.exit_code == 0, result.stderr
    return json.loads(out.read_text())


def test_ingest_with_dataset_records_the_dataset_bytes_S5_1(store, tmp_path):
    doc = _report(store, "base", tmp_path)
    assert doc["config"]["dataset_sha256"] == hashlib.sha256(DATASET.read_bytes()).hexdigest()
    assert doc["config"]["dataset"] == str(DATASET)
    run = json.loads(invoke("sql", "SELECT dataset_sha256 FROM runs", "-w", str(store), "--format", "json").stdout)
    assert run == [{"dataset_sha256": doc["config"]["dataset_sha256"]}]


@pytest.mark.slow
def test_answer_files_over_one_dataset_share_their_identity(store, tmp_path):
    """Without --dataset: different answers over the same labelled rows -> same labelled_rows_sha256 and
    questions_sha256 (and equal to the --dataset run's); a changed label changes the first only."""
    lines = _answer_lines()
    changed_answers, changed_label = list(lines), list(lines)
    for i in _data_line_numbers(lines):
        row = json.loads(lines[i - 1])
        row["answers"]["spam"]["noul"] = 1.0 - row["answers"]["spam"]["noul"]
        changed_answers[i - 1] = json.dumps(row)
    first = _data_line_numbers(lines)[0]
    row = json.loads(lines[first - 1])
    row["expected"]["urgency"] = 2
    changed_label[first - 1] = json.dumps(row)
    wh = tmp_path / "wh"
    for rid, content in (("orig", lines), ("other-answers", changed_answers), ("other-label", changed_label)):
        path = write_lines(tmp_path / ("%s.jsonl" % rid), content)
        assert invoke("ingest", str(path), "-w", str(wh), "--run-id", rid).exit_code == 0
    docs = {rid: _report(wh, rid, tmp_path) for rid in ("orig", "other-answers", "other-label")}
    base = _report(store, "base", tmp_path)
    ident = {rid: (d["extensions"]["run"]["labelled_rows_sha256"], d["config"]["questions_sha256"])
             for rid, d in docs.items()}
    assert docs["orig"]["overall"] != docs["other-answers"]["overall"]          # the answers really differ
    assert ident["orig"] == ident["other-answers"]
    assert ident["orig"] == (base["extensions"]["run"]["labelled_rows_sha256"], base["config"]["questions_sha256"])
    assert ident["other-label"][0] != ident["orig"][0]
    assert ident["other-label"][1] == ident["orig"][1]
    assert "dataset_sha256" not in docs["orig"]["config"]


# ---------------------------------------------------------------------------- a thin CLI
CLI_DIR = ROOT / "cli"


def test_one_usage_error_boundary_wherever_the_app_is_entered():
    """Every command registered on the app passes through one boundary: a UsageError raised anywhere
    below a command is the one `laya-cases:` line and exit 2, with no hand-written handler."""
    from laya_cases.core.errors import UsageError
    from laya_cases_cli.app import _App

    demo = _App()

    @demo.command()
    def boom() -> None:
        raise UsageError("bad thing")

    @demo.command()
    def fine() -> None:
        typer.echo("ok")

    assert_usage_error(CliRunner().invoke(demo, ["boom"]), "bad thing")
    assert CliRunner().invoke(demo, ["fine"]).stdout == "ok\n"
    for path in sorted(CLI_DIR.glob("*.py")):
        if path.name != "app.py":                      # the boundary itself
            assert "except UsageError" not in path.read_text(encoding="utf-8"), path.name


def test_no_sql_and_one_printer_in_the_cli():
    """cli/ runs no SQL and prints only through cli/console.py."""
    for path in sorted(CLI_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert ".execute(" not in text and "import duckdb" not in text, path.name
        if path.name != "console.py":
            assert "typer.echo" not in text and "print(" not in text, path.name
