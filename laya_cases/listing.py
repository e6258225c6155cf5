"""What `runs` and `sql` print, as columns and rows: the committed runs (sql/report/runs.sql) and
one checked user query (laya_cases/sql_guard.py). Query failures are one-line usage errors."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import duckdb

from . import UsageError
from . import sql as sqlfiles

Columns = Optional[List[str]]


def runs(con: duckdb.DuckDBPyConnection) -> Tuple[Columns, List[Tuple[Any, ...]]]:
    """Every committed run's identity columns, oldest first."""
    return fetch(sqlfiles.query(con, "report/runs.sql"))


def user_query(con: duckdb.DuckDBPyConnection, query: str):
    """Run a query `sql_guard.check_query` accepted, in a connection that cannot install or load
    extensions (no download, no write to ~/.duckdb, and the query cannot undo that)."""
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET lock_configuration = true")
    try:
        result = con.execute(query)
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    if result is None:                   # '' or only comments: DuckDB returns no result
        raise UsageError("the query contains no SQL statement")
    return result


def fetch(result) -> Tuple[Columns, Sequence[Tuple[Any, ...]]]:
    """(column names or None for a statement without a result set, rows)."""
    if result.description is None:
        return None, []
    try:
        rows = result.fetchall()
    except duckdb.Error as exc:          # e.g. a page of a store file that does not decode
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    return [d[0] for d in result.description], rows
