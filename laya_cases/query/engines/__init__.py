"""The engines that run the SQL library (docs/scale.md).

DuckDB, embedded, is the default. Another engine is a connection object that answers what the
report code asks of a DuckDB connection -- `execute(sql, params)` returning a result with
`description` / `fetchall` / `fetchone` / `fetchmany`, and `register` / `unregister` of an Arrow
table -- plus two calls laya_cases.query.sql hands whole files to, so the engine can read its override
of a file (sql/_<engine>/<path>) and translate it:

    run_file(name, params) -> result              sql/<name> as a query
    materialize_file(name, table, params) -> None  sql/<name> computed once, then readable as `table`

The SQL stays in sql/; an engine holds no metric.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Tuple

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.query.engines.spark import SparkConnection, SparkSQL, session   # pyspark: on a session's start


class Engine(Protocol):
    """What an engine other than DuckDB implements (laya_cases.query.engines.spark.SparkConnection)."""

    def execute(self, sql: str, params: Optional[Dict[str, Any]] = None) -> Any: ...
    def run_file(self, name: str, params: Dict[str, Any]) -> Any: ...
    def materialize_file(self, name: str, table: str, params: Dict[str, Any]) -> None: ...
    def register(self, name: str, table: Any) -> None: ...
    def unregister(self, name: str) -> None: ...


ENGINES = ("duckdb", "spark")
DEFAULT = "duckdb"


def check_engine(name: str) -> str:
    if name not in ENGINES:
        raise UsageError("--engine must be one of %s, got %r" % (", ".join(ENGINES), name))
    return name


def connect(wh, run_ids: Optional[List[str]] = None, engine: str = DEFAULT, master: Optional[str] = None,
            variants: bool = False):
    """A connection over committed runs: DuckDB's (Warehouse.connect) or a SparkConnection."""
    if check_engine(engine) == "duckdb":
        return sqlfiles.connect(wh, run_ids, variants)
    return SparkConnection(session(master), wh, run_ids, variants)


def of(options) -> Tuple[str, Optional[str]]:
    """(engine, master) of report options (report.Options), DuckDB's when there are none."""
    return check_engine(getattr(options, "engine", None) or DEFAULT), getattr(options, "spark_master", None)


def connect_tables(engine: str = DEFAULT, master: Optional[str] = None):
    """A connection without the store, for tables registered from Python (the gates' and compare's,
    laya_cases/gates/tables.py): DuckDB in memory, or a SparkSQL over a Spark session."""
    if check_engine(engine) == "duckdb":
        con = duckdb.connect()
        sqlfiles.prepare_connection(con)
        return con
    return SparkSQL(session(master))
