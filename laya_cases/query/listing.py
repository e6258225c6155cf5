"""What `runs` and `sql` print, as columns and rows: the committed runs (sql/report/runs.sql) and
one checked user query (laya_cases/query/guard.py). Query failures are one-line usage errors."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, List, Optional, Sequence, Tuple

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles

Columns = Optional[List[str]]


def runs(con: duckdb.DuckDBPyConnection) -> Tuple[Columns, List[Tuple[Any, ...]]]:
    """Every committed run's identity columns, oldest first."""
    return fetch(sqlfiles.query(con, "report/runs.sql"))


@contextmanager
def time_limit(con: duckdb.DuckDBPyConnection, seconds: Optional[float]):
    """Interrupt `con`'s running query after `seconds` (None: no limit); the interrupted query's error
    becomes one line saying so."""
    if seconds is None:
        yield
        return
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()
    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        yield
    except UsageError:
        if fired.is_set():
            raise UsageError("query interrupted after %g s (--timeout)" % seconds) from None
        raise
    finally:
        timer.cancel()


def fetch(result) -> Tuple[Columns, Sequence[Tuple[Any, ...]]]:
    """(column names or None for a statement without a result set, rows)."""
    if result.description is None:
        return None, []
    try:
        rows = result.fetchall()
    except duckdb.Error as exc:          # e.g. a page of a store file that does not decode
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    return [d[0] for d in result.description], rows


# ---------------------------------------------------------------------------- big results (docs/sql.md)
OUTPUT_FORMATS = ("csv", "json", "parquet")
_RESULT_VIEW = "_lc_result"


def uses_library(query: str) -> bool:
    """Whether a user query may call the SQL library's macros or lc_exact_total (every name starts `lc_`):
    only then does `sql` define them (registering the Python function imports numpy, ~0.1 s)."""
    return "lc_" in query.lower()


def user_relation(con: duckdb.DuckDBPyConnection, query: str):
    """A checked read query as a lazy DuckDB relation: nothing runs until rows are asked for, so a
    LIMIT for the screen or a COPY for a file is planned into the query itself."""
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET lock_configuration = true")
    try:
        rel = con.sql(query)
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    if rel is None:
        raise UsageError("the query contains no SQL statement")
    return rel


#: Plan operators of a count that reads its input once, row by row (the count costs no more than a scan of the
#: columns it needs); any other (sort, group, join, window, an inner aggregate) makes the count a second run of
#: the whole query, which `head` does only over at most COUNT_ROWS rows. Names as DuckDB's EXPLAIN gives them.
_STREAMING = frozenset({"PROJECTION", "FILTER", "READ_PARQUET", "TABLE_SCAN", "SEQ_SCAN", "COLUMN_DATA_SCAN",
                        "DUMMY_SCAN", "EMPTY_RESULT", "RANGE", "STREAMING_LIMIT", "LIMIT", "TOP_N", "UNION"})
COUNT_ROWS = 1_000_000


def head(con: duckdb.DuckDBPyConnection, rel, max_rows: int) -> Tuple[List[str], List[Tuple[Any, ...]], Optional[int]]:
    """(columns, the first `max_rows` rows, how many rows follow them or None when they were not counted).
    The LIMIT is planned into the query (a sort becomes a top-N), so the first screen never waits for the
    whole result; the rest is counted by a second query when that is cheap (count_is_cheap), else None."""
    try:
        rows = rel.limit(max_rows + 1).fetchall()
        more: Optional[int] = 0
        if len(rows) > max_rows:
            rows = rows[:max_rows]
            count = rel.aggregate("count(*)")
            more = count.fetchall()[0][0] - max_rows if count_is_cheap(con, count) else None
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    return list(rel.columns), rows, more


def count_is_cheap(con: duckdb.DuckDBPyConnection, count) -> bool:
    """Whether the count relation `count` costs at most one pass over the columns it reads: DuckDB's plan for it
    (EXPLAIN, about 10 ms) holds only streaming operators under the count, or reads at most COUNT_ROWS rows.
    A plan that cannot be read is counted (the exact number, as before)."""
    import json

    try:
        plan = json.loads(con.execute("EXPLAIN (FORMAT json) " + count.sql_query()).fetchall()[0][1])
    except (duckdb.Error, ValueError, IndexError, TypeError):
        return True
    names, rows = [], [0]

    def walk(node, top: bool) -> None:
        if not (top and node.get("name") == "UNGROUPED_AGGREGATE"):       # the count itself
            names.append(node.get("name"))
        estimate = str((node.get("extra_info") or {}).get("Estimated Cardinality", "0"))
        rows.append(int(estimate) if estimate.isdigit() else 0)
        for child in node.get("children") or ():
            walk(child, False)

    for node in plan if isinstance(plan, list) else [plan]:
        walk(node, True)
    return all(name in _STREAMING for name in names) or max(rows) <= COUNT_ROWS


def _finite(expr: str, kind, depth: int = 0) -> Optional[str]:
    """`expr` with every NaN/Infinity double (at any list/struct depth) made NULL; None when the type
    holds no floating-point value."""
    if kind.id in ("double", "float"):
        return "CASE WHEN isfinite(%s) THEN %s END" % (expr, expr)
    if kind.id == "list":
        var = "v%d" % depth
        inner = _finite(var, dict(kind.children)["child"], depth + 1)
        return None if inner is None else "list_transform(%s, lambda %s: %s)" % (expr, var, inner)
    if kind.id == "struct":
        fields = [(name, _finite("%s.%s" % (expr, sqlfiles.quote_ident(name)), child, depth + 1))
                  for name, child in kind.children]
        if all(inner is None for _, inner in fields):
            return None
        packed = ", ".join("%s := %s" % (sqlfiles.quote_ident(name), inner or "%s.%s" % (expr, sqlfiles.quote_ident(name)))
                           for name, inner in fields)
        return "CASE WHEN %s IS NOT NULL THEN struct_pack(%s) END" % (expr, packed)
    return None


def _nested(kind) -> bool:
    return kind.id in ("list", "array", "struct", "map", "union")


def output_select(rel, fmt: str) -> str:
    """The SELECT over the result view that a format writes: JSON is strict (a NaN or infinite double
    is null), CSV writes a list, struct or map as its JSON text; Parquet keeps every type."""
    columns = []
    for name, kind in zip(rel.columns, rel.types):
        col = sqlfiles.quote_ident(name)
        expr = None
        if fmt == "json":
            expr = _finite(col, kind)
        elif fmt == "csv" and _nested(kind):
            expr = "to_json(%s)" % col
        columns.append(col if expr is None else "%s AS %s" % (expr, col))
    return "SELECT %s FROM %s" % (", ".join(columns) or "*", _RESULT_VIEW)


def write_result(con: duckdb.DuckDBPyConnection, rel, fmt: str, target: str) -> int:
    """DuckDB writes the whole result to the file `target` (COPY is ours; the user's statement was
    checked to be a read); returns the number of rows written."""
    options = {"csv": "FORMAT csv, HEADER true", "json": "FORMAT json, ARRAY true",
               "parquet": "FORMAT parquet, COMPRESSION zstd"}[fmt]
    try:
        con.register(_RESULT_VIEW, rel)
        written = con.execute("COPY (%s) TO '%s' (%s)" % (output_select(rel, fmt), target.replace("'", "''"),
                                                          options)).fetchall()
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    return int(written[0][0]) if written and written[0] else 0


def result_chunks(con: duckdb.DuckDBPyConnection, rel, fmt: str, size: int = 1 << 20):
    """The whole result as DuckDB writes it in `fmt` (csv or json), in byte chunks for stdout: written
    to a private temporary file first, which is removed afterwards."""
    import os
    import tempfile

    handle, path = tempfile.mkstemp(prefix="laya-cases-sql-", suffix="." + fmt)
    os.close(handle)
    try:
        write_result(con, rel, fmt, path)
        with open(path, "rb") as data:
            while True:
                chunk = data.read(size)
                if not chunk:
                    break
                yield chunk
    finally:
        os.unlink(path)
