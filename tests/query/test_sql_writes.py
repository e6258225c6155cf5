"""`laya-cases sql` cannot write, by construction (laya_cases/query/guard.py): generated attempts.

Every route a token parse of COPY's options once missed (dollar quoting with and without a tag, E''
strings, FILENAME_PATTERN and FILE_EXTENSION that climb out of a folder, PARTITION_BY, PER_THREAD_OUTPUT)
and the other writers (EXPORT DATABASE, ATTACH, CREATE in an attached file, INSTALL, LOAD, SET, CALL,
PRAGMA, CHECKPOINT, a statement smuggled after a closing parenthesis, EXPLAIN ANALYZE of a writer), each
aimed at a committed partition, with and without the old --allow-write flag: exit 2, one stderr line, no
traceback, the store's tree unchanged and nothing new anywhere under the test's folder. Reads still work:
PIVOT, a user's own CSV, a trailing semicolon; --timeout interrupts a query that would not end.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases_cli.app import app

TARGETS = ["{wh}/cases/run_id=a/part-00009.parquet", "{wh}/runs/run_id=a/run.parquet", "{wh}/x.csv"]
WRITERS = [
    "COPY (FROM cases) TO '{t}'",
    "COPY (FROM cases) TO $${t}$$",
    "COPY (FROM cases) TO $tag${t}$tag$",
    "COPY (FROM cases) TO E'{t}'",
    "COPY (FROM cases) TO e'{t}'",
    "COPY (FROM cases) TO '{tmp}/p' (FORMAT parquet, PARTITION_BY (qid), FILENAME_PATTERN '../../wh/cases/run_id=a/x_{{i}}')",
    "COPY (FROM cases) TO '{tmp}/q' (FORMAT parquet, PER_THREAD_OUTPUT, FILENAME_PATTERN '../wh/cases/run_id=a/x_{{i}}')",
    "COPY (FROM cases) TO '{tmp}/r' (FORMAT csv, PARTITION_BY (qid), FILE_EXTENSION '/../../../wh/cases/run_id=a/y')",
    "COPY cases TO '{t}'",
    "EXPORT DATABASE '{wh}/cases/run_id=a'",
    "ATTACH '{wh}/cases/run_id=a/x.db' AS x",
    "ATTACH '{wh}/cases/run_id=a/x.db' AS x; CREATE TABLE x.t AS FROM cases",
    "SELECT 1) ; COPY (FROM cases) TO '{t}' ; SELECT (1",
    "SELECT 1); COPY (FROM cases) TO '{t}'; --",
    "EXPLAIN ANALYZE COPY (FROM cases) TO '{t}'",
    "EXPLAIN COPY (FROM cases) TO '{t}'",
    "WITH w AS (SELECT 1) COPY (FROM w) TO '{t}'",
    "CREATE TABLE t AS FROM cases",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET threads = 1",
    "CALL pragma_version()",
    "PRAGMA enable_profiling",
    "CHECKPOINT",
    "UPDATE EXTENSIONS",
    "SELECT * FROM query('COPY (FROM cases) TO ''{t}''')",
]
QUERIES = [w.replace("{t}", TARGETS[0]) for w in WRITERS] + [w.replace("{t}", t) for w in WRITERS[:5] for t in TARGETS[1:]]


def run_cli(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """tmp/wh with run `a` committed, and a user's own labels file beside it."""
    base = tmp_path_factory.mktemp("sqlw")
    result = run_cli("ingest", str(ROOT / "data" / "support.answers.jsonl"), "-w", str(base / "wh"), "--run-id", "a")
    assert result.exit_code == 0, result.stderr
    (base / "labels.csv").write_text("qid,weight\nintent,2\nspam,1\n", encoding="utf-8")
    return base


def _files(root: Path) -> List[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("allow_write", [False, True], ids=["plain", "allow-write"])
@pytest.mark.parametrize("query", QUERIES)
def test_no_statement_writes_anything(home, query, allow_write):
    text = query.format(wh=home / "wh", tmp=home)
    before, files = snapshot_tree(home / "wh"), _files(home)
    result = run_cli("sql", text, "-w", str(home / "wh"), *(["--allow-write"] if allow_write else []))
    assert result.exit_code == 2, (text, result.stdout, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya-cases: "), lines
    assert snapshot_tree(home / "wh") == before and _files(home) == files, text
    if allow_write:
        assert "--allow-write is gone" in lines[0]


def test_there_are_enough_generated_cases():
    assert len(QUERIES) * 2 >= 60 and len(set(QUERIES)) == len(QUERIES)


@pytest.mark.parametrize("query,first", [
    ("PIVOT (SELECT language_key, qid, correct::INT AS c FROM cases) ON qid USING sum(c) ORDER BY 1", "language_key"),
    ("UNPIVOT (SELECT 1 AS a, 2 AS b) ON a, b INTO NAME k VALUE v", "k"),
    ("SELECT qid, weight FROM cases JOIN read_csv('{tmp}/labels.csv') USING (qid) GROUP BY ALL ORDER BY 1", "qid"),
    ("SELECT count(*) AS n FROM cases;  -- a trailing semicolon and comment", "n"),
    ("DESCRIBE cases", "column_name"),
])
def test_reads_still_work(home, query, first):
    result = run_cli("sql", query.format(tmp=home), "-w", str(home / "wh"), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].split(",")[0] == first


@pytest.mark.parametrize("query", ["SELECT count(*) FROM range(1000000000000) a",
                                   "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
                                   "SELECT count(*) FROM r"])
@pytest.mark.slow
def test_timeout_interrupts_a_query_that_would_not_end(home, query):
    result = run_cli("sql", query, "-w", str(home / "wh"), "--timeout", "0.5")
    assert result.exit_code == 2 and result.stderr == "laya-cases: query interrupted after 0.5 s (--timeout)\n"


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_bad_timeout_is_one_line(home, value):
    result = run_cli("sql", "SELECT 1", "-w", str(home / "wh"), "--timeout", value)
    assert result.exit_code == 2 and "--timeout" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_lone_surrogate_is_one_line(home):
    result = run_cli("sql", "SELECT '\udcff'", "-w", str(home / "wh"))
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        "laya-cases: the query is not valid UTF-8 text (a lone surrogate?)"]
    assert not os.path.exists(home / "wh" / "x.csv")
