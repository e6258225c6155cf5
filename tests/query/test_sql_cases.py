# SQL unit tests as data: tests/sql_cases/<folder>/<name>.json holds rows-in/rows-out cases of sql/<folder>/<name>.sql:
# {"sql", "tables": {table: {column: TYPE}}, "cases": [{"name", "spec", "params", "inputs": {table: [rows]} or
# "inputs_from": "<case>", "upstream": {table: "sql file"}, "expected": {columns, rows, ordered, partial, abs_tol}}]}
"""Each case builds its input tables on a fresh connection, runs one SQL file, and compares rows.

Rows are lists in the column order of `tables` (inputs) or `expected.columns` (output). Floats compare
exactly (NaN equals NaN; a float 0.0 must not come back as -0.0) unless the case sets `abs_tol`; an
int must come back as an int and a float as a float. `upstream` materialises other SQL files first
(in the order given), so a case can start from an earlier table, e.g. level_cells -> levels -> aurc.
`partial: true` compares only the named output columns; otherwise they must be all of them, in order.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Dict, List

import duckdb
import pytest

from laya_cases.query import sql as Q

CASES = Path(__file__).resolve().parents[1] / "sql_cases"
COVERED = ("metrics", "pipeline")


def _case_files() -> List[Path]:
    return sorted(CASES.glob("*/*.json"))


def _all_cases():
    for path in _case_files():
        doc = json.loads(path.read_text(encoding="utf-8"))
        named = {case["name"]: case for case in doc["cases"]}
        for case in doc["cases"]:
            if "inputs_from" in case:                 # reuse another case's input rows
                case = dict(case, inputs=named[case["inputs_from"]]["inputs"], upstream=named[case["inputs_from"]].get(
                    "upstream", {}))
            yield pytest.param(doc, case, id="%s/%s::%s" % (path.parent.name, path.stem, case["name"]))


def header_inputs(name: str) -> List[str]:
    """Table names of a file's `-- input:` line (parenthesised remarks dropped)."""
    for line in Q.text(name).splitlines():
        if line.startswith("-- input:"):
            return [t.strip() for t in re.sub(r"\([^)]*\)", "", line[len("-- input:"):]).split(",") if t.strip()]
    raise ValueError("sql/%s has no '-- input:' header line" % name)


def _same(expected: Any, actual: Any, abs_tol: float) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, float):
        if not isinstance(actual, float):
            return False
        if math.isnan(expected) or math.isnan(actual):
            return math.isnan(expected) and math.isnan(actual)
        if expected == 0.0 and actual == 0.0:
            return math.copysign(1.0, expected) == math.copysign(1.0, actual)
        return expected == actual or abs(expected - actual) <= abs_tol
    if isinstance(expected, int):
        return isinstance(actual, int) and expected == actual
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(_same(e, a, abs_tol) for e, a in zip(expected, actual)))
    return expected == actual


def _create(con: duckdb.DuckDBPyConnection, table: str, columns: Dict[str, str], rows: List[list]) -> None:
    con.execute("CREATE TEMP TABLE %s (%s)" % (Q.quote_ident(table), ", ".join(
        "%s %s" % (Q.quote_ident(c), t) for c, t in columns.items())))
    for row in rows:
        assert len(row) == len(columns), "row %r does not match the columns of %s" % (row, table)
    if rows:
        con.executemany("INSERT INTO %s VALUES (%s)" % (Q.quote_ident(table), ", ".join("?" * len(columns))), rows)


def _run_case(doc: Dict[str, Any], case: Dict[str, Any]):
    con = duckdb.connect()
    Q.prepare_connection(con)
    for table, rows in case["inputs"].items():
        _create(con, table, doc["tables"][table], rows)
    for table, name in case.get("upstream", {}).items():
        Q.materialize(con, name, table, case.get("upstream_params", {}).get(table))
    result = Q.query(con, doc["sql"], case.get("params"))
    columns = [d[0] for d in result.description]
    return columns, result.fetchall()


def _check_inputs(doc: Dict[str, Any], case: Dict[str, Any]) -> None:
    """The case feeds exactly what the header says the file reads (directly or through `upstream`)."""
    upstream = case.get("upstream", {})
    readers = [doc["sql"]] + list(upstream.values())
    read = {t for name in readers for t in header_inputs(name)}
    assert set(header_inputs(doc["sql"])) <= set(case["inputs"]) | set(upstream), "missing input tables"
    unread = sorted(set(case["inputs"]) - read)
    assert not unread, "input tables no file of the case reads: %s" % unread


@pytest.mark.parametrize("doc, case", list(_all_cases()))
def test_sql_case(doc, case):
    _check_inputs(doc, case)
    exp = case["expected"]
    columns, rows = _run_case(doc, case)
    if not exp.get("partial"):
        assert columns == exp["columns"], "output columns differ"
    idx = [columns.index(c) for c in exp["columns"]]
    actual = [[r[i] for i in idx] for r in rows]
    tol = float(exp.get("abs_tol", 0.0))
    wanted = exp["rows"]
    assert len(actual) == len(wanted), "got %d rows, expected %d:\n%r" % (len(actual), len(wanted), actual)
    if exp.get("ordered"):
        for e, a in zip(wanted, actual):
            assert _same(e, a, tol), "row %r, expected %r" % (a, e)
        return
    left = list(actual)
    for e in wanted:
        hit = next((i for i, a in enumerate(left) if _same(e, a, tol)), None)
        assert hit is not None, "expected row %r not found among %r" % (e, left)
        left.pop(hit)


def test_every_metric_and_pipeline_file_has_a_case():
    docs = {json.loads(p.read_text(encoding="utf-8"))["sql"]: p for p in _case_files()}
    for path in docs.values():
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert path.relative_to(CASES).with_suffix(".sql").as_posix() == doc["sql"], path
        assert doc["cases"], "%s has no case" % path
    missing = [name for folder in COVERED for name in Q.listing(folder) if name not in docs]
    assert not missing, "SQL files without a case in tests/sql_cases/: %s" % missing


def test_a_wrong_expectation_fails():
    """The comparison is not vacuous: NaN, -0.0, int/float and row multiplicity all count."""
    assert _same(float("nan"), float("nan"), 0.0) and not _same(0.0, -0.0, 0.0)
    assert not _same(1, 1.0, 0.0) and not _same(1.0, 1, 0.0) and not _same(True, 1, 0.0)
    assert not _same(0.1 + 0.2, 0.3, 0.0) and _same(0.1 + 0.2, 0.3, 1e-15)
