"""`laya-cases sql` for big results: the table shows --max-rows rows and says how many more; csv,
json and parquet are written by DuckDB (lists as lists, strict JSON: NaN/Infinity are null); --out
files never go into the warehouse; a user's own COPY is refused (tests/query/test_sql_writes.py)."""
from __future__ import annotations

import csv
import io
import json
import math

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401
from helpers import write_jsonl
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

N = 57


def invoke(*args):
    return CliRunner().invoke(app, list(args))


def _row(i: int) -> dict:
    conf = [0.25, math.nan, math.inf, 1e-7][i % 4]
    return {"state": "s%d" % i, "tags": ["t,1", "q\"2"][: i % 3],
            "questions": {"q": {"type": "choice", "instructions": "i", "criteria": ["a", "b"]}},
            "expected": {"q": "a"},
            "answers": {"q": {"type": "choice", "choice": "ab"[i % 2], "confidence": conf,
                              "probabilities": {"a": conf, "b": 0.5}}}}


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    root = tmp_path_factory.mktemp("sqlout")
    path = write_jsonl(root / "a.answers.jsonl", [_row(i) for i in range(N)])
    ingest(Warehouse(root / "wh"), str(path), run_id="r1")
    return str(root / "wh")


QUERY = "SELECT row_index, confidence, probabilities, tags, correct FROM cases ORDER BY row_index"


def test_table_caps_rows_and_counts_the_rest(wh):
    result = invoke("sql", QUERY, "-w", wh, "--max-rows", "5")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("… %d more row(s)" % (N - 5))
    body = [line for line in lines[2:-1] if line.strip()]
    assert [line.split()[0] for line in body] == ["0", "1", "2", "3", "4"]
    whole = invoke("sql", QUERY, "-w", wh, "--max-rows", str(N))
    assert "more row(s)" not in whole.stdout and len([l for l in whole.stdout.splitlines()[2:] if l.strip()]) == N
    default = invoke("sql", QUERY, "-w", wh)
    assert default.stdout.splitlines()[-1].startswith("… %d more row(s)" % (N - 40))


def test_a_count_that_would_rerun_the_query_is_left_out(wh, monkeypatch):
    """The table never waits for a second run of an expensive query: a sort, group or join over more than
    listing.COUNT_ROWS rows says `more rows, not counted`; a scan or filter is counted at any size."""
    from laya_cases.query import listing

    monkeypatch.setattr(listing, "COUNT_ROWS", 10)           # the store's 57 rows count as big
    sorted_ = invoke("sql", QUERY, "-w", wh, "--max-rows", "5")
    assert sorted_.exit_code == 0, sorted_.stderr
    lines = sorted_.stdout.splitlines()
    assert lines[-1].startswith("… more rows, not counted") and "--max-rows N" in lines[-1]
    assert [line.split()[0] for line in lines[2:-1] if line.strip()] == ["0", "1", "2", "3", "4"]
    for query, more in (("SELECT row_index FROM cases", N - 5), ("SELECT row_index FROM cases WHERE correct", None),
                        ("SELECT row_index, tags FROM cases UNION ALL SELECT row_index, tags FROM cases", 2 * N - 5),
                        ("SELECT row_index, rank() OVER (ORDER BY confidence) FROM cases", N - 5)):  # window pruned
        last = invoke("sql", query, "-w", wh, "--max-rows", "5").stdout.splitlines()[-1]
        assert last.startswith("… %d more row(s)" % more if more else "… "), (query, last)
        assert "not counted" not in last, (query, last)
    for query in ("SELECT qid, count(*) FROM cases GROUP BY row_index, qid",
                  "SELECT a.row_index FROM cases a JOIN cases b USING (row_index)"):
        last = invoke("sql", query, "-w", wh, "--max-rows", "5").stdout.splitlines()[-1]
        assert last.startswith("… more rows, not counted"), (query, last)
    monkeypatch.setattr(listing, "COUNT_ROWS", 1000)         # small again: every kind is counted
    assert invoke("sql", QUERY, "-w", wh, "--max-rows", "5").stdout.splitlines()[-1].startswith(
        "… %d more row(s)" % (N - 5))


def test_the_count_plan_is_read_from_duckdb(wh, monkeypatch):
    from laya_cases.query import listing

    con = connect(Warehouse(wh))
    monkeypatch.setattr(listing, "COUNT_ROWS", 0)
    cheap = {q: listing.count_is_cheap(con, con.sql(q).aggregate("count(*)")) for q in (
        "SELECT * FROM cases", "SELECT * FROM cases WHERE confidence > 0.5 LIMIT 3", "SELECT * FROM range(10)",
        "SELECT * FROM cases ORDER BY confidence", "SELECT DISTINCT qid FROM cases", "SUMMARIZE cases")}
    assert cheap == {"SELECT * FROM cases": True, "SELECT * FROM cases WHERE confidence > 0.5 LIMIT 3": True,
                     "SELECT * FROM range(10)": True, "SELECT * FROM cases ORDER BY confidence": False,
                     "SELECT DISTINCT qid FROM cases": False, "SUMMARIZE cases": False}


def test_table_cells_are_literal_text(wh):
    """A value or name that looks like rich markup is printed as it is (`[/]` used to be a traceback)."""
    result = invoke("sql", "SELECT '[/]' AS \"[b]\", '[red]x[/red]' AS y, 'a' || chr(10) || 'b' AS z", "-w", wh)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["[b]", "y", "z"] and lines[2].split() == ["[/]", "[red]x[/red]", "a\\nb"]


def test_library_functions_are_defined_when_a_query_names_them(wh):
    """`sql` defines the lc_* macros and lc_exact_total only for a query that names one (the Python
    function imports numpy); such a query works as before."""
    from laya_cases.query import listing

    assert listing.uses_library("SELECT LC_EXACT_SUM(x) FROM t") and not listing.uses_library("SELECT 1")
    query = "SELECT lc_exact_sum(confidence) AS s, lc_mcnemar_p(3, 1) AS p FROM cases WHERE isfinite(confidence)"
    result = invoke("sql", query, "-w", wh, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)[0]["s"] == pytest.approx(sum([0.25, 1e-7] * 14) + 0.25)


def test_json_is_strict_and_lists_are_lists(wh):
    result = invoke("sql", QUERY, "-w", wh, "--format", "json")
    assert result.exit_code == 0, result.stderr

    def refuse(token):
        raise AssertionError("non-standard JSON token %s" % token)
    rows = json.loads(result.stdout, parse_constant=refuse)
    assert len(rows) == N
    assert [r["confidence"] for r in rows[:4]] == [0.25, None, None, 1e-7]
    assert rows[1]["probabilities"] == [None, 0.5] and rows[2]["probabilities"] == [None, 0.5]
    assert rows[2]["tags"] == ["t,1", "q\"2"] and rows[0]["tags"] == [] and rows[0]["correct"] is True
    empty = invoke("sql", "SELECT 1 AS x WHERE false", "-w", wh, "--format", "json")
    assert json.loads(empty.stdout) == []


def test_csv_writes_lists_as_json_text(wh):
    result = invoke("sql", QUERY, "-w", wh, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == N and list(rows[0]) == ["row_index", "confidence", "probabilities", "tags", "correct"]
    assert json.loads(rows[2]["tags"]) == ["t,1", "q\"2"] and json.loads(rows[0]["probabilities"]) == [0.25, 0.5]
    assert rows[0]["correct"] == "true" and float(rows[3]["confidence"]) == 1e-7


def test_parquet_out_keeps_types(wh, tmp_path):
    target = tmp_path / "cases.parquet"
    result = invoke("sql", QUERY, "-w", wh, "--format", "parquet", "--out", str(target))
    assert result.exit_code == 0 and result.stdout == "" and "wrote %d row(s)" % N in result.stderr
    table = pq.read_table(str(target))
    assert table.num_rows == N and str(table.schema.field("tags").type) == "list<element: string>"
    assert math.isnan(table.column("confidence")[1].as_py())             # Parquet keeps NaN as NaN
    again = invoke("sql", QUERY, "-w", wh, "--format", "json", "--out", str(tmp_path / "c.json"))
    assert again.exit_code == 0 and len(json.loads((tmp_path / "c.json").read_text())) == N


@pytest.mark.parametrize("args, needle", [
    (["--format", "parquet"], "add --out FILE"),
    (["--out", "x.csv"], "--out writes csv, json or parquet"),
    (["--format", "xml"], "--format must be table, csv or json"),
    (["--max-rows", "0"], "--max-rows must be at least 1"),
])
def test_bad_output_flags_are_one_line(wh, args, needle):
    result = invoke("sql", QUERY, "-w", wh, *args)
    assert result.exit_code == 2 and result.stdout == "" and needle in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_out_never_into_the_warehouse(wh):
    for target in (wh + "/cases/x.parquet", wh, wh + "/.."):
        result = invoke("sql", QUERY, "-w", wh, "--format", "parquet", "--out", target)
        assert result.exit_code == 2 and "warehouse" in result.stderr, result.stderr
    url = invoke("sql", QUERY, "-w", wh, "--format", "csv", "--out", "s3://bucket/x.csv")
    assert url.exit_code == 2 and "only local files" in url.stderr
    for statement in ("COPY (FROM cases) TO 'x.csv'", "CREATE TABLE t AS FROM cases"):
        refused = invoke("sql", statement, "-w", wh, "--format", "csv", "--out", "y.csv")
        assert refused.exit_code == 2 and "read-only" in refused.stderr


# ---------------------------------------------------------------------------- memory limit and spilling
@pytest.mark.slow
def test_memory_limit_and_spill_directory(wh, monkeypatch, tmp_path):
    setting = "SELECT current_setting('memory_limit') AS m, current_setting('temp_directory') AS t"
    monkeypatch.setenv("LAYA_CASES_MEMORY_LIMIT", "300MiB")
    monkeypatch.setenv("LAYA_CASES_TEMP_DIR", str(tmp_path / "spill"))
    rows = json.loads(invoke("sql", setting, "-w", wh, "--format", "json").stdout)
    assert rows == [{"m": "300.0 MiB", "t": str(tmp_path / "spill")}]
    con = connect(Warehouse(wh))                          # works within the limit (spilling if it must)
    assert con.execute("SELECT count(*), sum(x) FROM (SELECT x FROM range(3000000) t(x) ORDER BY random())"
                       ).fetchall() == [(3000000, 4499998500000)]
    monkeypatch.delenv("LAYA_CASES_TEMP_DIR")
    default = json.loads(invoke("sql", setting, "-w", wh, "--format", "json").stdout)[0]["t"]
    assert default.endswith("/%d" % __import__("os").getpid()) and "laya-cases-" in default
    for bad in ("lots", "12 parsecs", "-1GB"):
        monkeypatch.setenv("LAYA_CASES_MEMORY_LIMIT", bad)
        result = invoke("sql", "SELECT 1", "-w", wh)
        assert result.exit_code == 2 and "LAYA_CASES_MEMORY_LIMIT" in result.stderr
        assert len(result.stderr.splitlines()) == 1
