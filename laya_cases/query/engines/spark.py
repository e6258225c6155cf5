"""The metric library on Apache Spark: the same sql/ files, translated (translate.py), over the same store.

`report RUN --engine spark` reads the run's Parquet files with Spark, builds the pipeline tables
(`materialize_file`: each one computed once, then read by name) and runs every metric file
(`run_file`). The report's Python code is the same as DuckDB's: a SparkConnection answers the few
calls report.py makes of a connection (execute, register, unregister). The run's identity rows,
the damage check and the cases listing still come from the store through DuckDB (small reads).
Sessions: --spark-master URL (e.g. spark://host:7077, yarn, local[4]), else $SPARK_REMOTE (Spark
Connect, sc://host:15002), else local[*] on this machine. docs/scale.md.
"""
from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.interop.extras import install_hint
from laya_cases.query.engines import translate, udfs
from laya_cases.query.sql import connect
from laya_cases.store import schema as store_schema     # its Arrow schemas are made on first use

ENGINE = "spark"
REMOTE_ENV = "SPARK_REMOTE"
DEFAULT_MASTER = "local[*]"
_LOCAL_SHUFFLE_PARTITIONS = "8"         # small tables: 200 default shuffle tasks cost more than the work
_GLOB = re.compile(r"([\\\[\]{}*?])")


def session(master: Optional[str] = None, conf: Optional[Dict[str, str]] = None):
    """A Spark session: the master given, else $SPARK_REMOTE (Spark Connect), else local[*]; `conf`: more
    Spark settings (they apply when this call starts the session)."""
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark\..*")
    try:
        from pyspark.logger import PySparkLogger
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("--engine spark needs pyspark and Java 17+: " + install_hint("spark")) from None
    PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True   # a failure is our one line, not a JSON log
    remote = os.environ.get(REMOTE_ENV)
    builder = SparkSession.builder.appName("laya-cases").config("spark.log.level", "ERROR")
    if remote and not master:
        builder = builder.remote(remote)
    else:
        master = master or DEFAULT_MASTER
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)   # local workers: this interpreter
        builder = builder.master(master).config("spark.ui.showConsoleProgress", "false")
        if master.startswith("local"):
            builder = builder.config("spark.sql.shuffle.partitions", _LOCAL_SHUFFLE_PARTITIONS) \
                             .config("spark.ui.enabled", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:                 # no Java, a master that does not answer, ...
        raise UsageError("--engine spark could not start a session (%s): %s"
                         % (remote if remote and not master else master, _first_line(exc))) from None
    _register_udfs(spark)
    return spark


def _first_line(exc: BaseException) -> str:
    lines = [l.strip() for l in str(exc).splitlines() if l.strip()]
    return lines[0][:300] if lines else type(exc).__name__


@contextmanager
def _spark_errors():
    """A Spark failure (analysis or execution) as one line (UsageError) naming Spark's error class."""
    try:
        yield
    except Exception as exc:
        from pyspark.errors import PySparkException

        if isinstance(exc, PySparkException):
            raise UsageError("spark: %s" % _first_line(exc)) from None
        raise


def _sql(spark, text: str):
    with _spark_errors():
        return spark.sql(text)


def _register_udfs(spark) -> None:
    """lc_exact_total: the one rounding function, as DuckDB registers it (laya_cases.query.sql.exact_total);
    lc_binomial_terms: what Spark SQL lacks for the McNemar macro (udfs.py). Pickled by value, so
    executors need Python and pyspark, not laya-cases."""
    try:
        from pyspark import cloudpickle
        for module in (sqlfiles, udfs):
            cloudpickle.register_pickle_by_value(sys.modules[module.__name__])
    except (ImportError, AttributeError, ValueError):
        pass
    spark.udf.register("lc_exact_total", sqlfiles.exact_total, "double")
    spark.udf.register("lc_binomial_terms", udfs.binomial_terms, "double")


class SparkResult:
    """The subset of a DuckDB result report.py reads: description, fetchall, fetchone, fetchmany."""

    def __init__(self, df):
        self.description = [(name, None, None, None, None, None, None) for name in df.columns]
        with _spark_errors():
            self._rows = [tuple(_plain(v) for v in row) for row in df.collect()]
        self._at = 0

    def fetchall(self) -> List[tuple]:
        rows, self._at = self._rows[self._at:], len(self._rows)
        return rows

    def fetchmany(self, size: int = 1) -> List[tuple]:
        rows = self._rows[self._at:self._at + size]
        self._at += len(rows)
        return rows

    def fetchone(self) -> Optional[tuple]:
        rows = self.fetchmany(1)
        return rows[0] if rows else None


def _plain(value: Any) -> Any:
    """Spark's DECIMAL(38,0) counts come back as Decimal; DuckDB's HUGEINT as int."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class SparkSQL:
    """A Spark session as the SQL library's connection: execute, run_file, materialize_file, register.
    The gates' and compare's tables are registered Arrow tables (laya_cases/gates/tables.py); a
    SparkConnection adds the store's views."""

    engine = ENGINE

    def __init__(self, spark):
        self.spark = spark
        self._views: List[str] = []

    def _frame(self, rows: List[Dict[str, Any]], schema):
        from pyspark.sql.pandas.types import from_arrow_schema

        return self.spark.createDataFrame(rows, schema=from_arrow_schema(schema))

    def _view(self, name: str, frame) -> None:
        frame.createOrReplaceTempView(name)
        self._views.append(name)

    # ------------------------------------------------------------------ what the SQL library calls
    def execute(self, text: str, params: Optional[Dict[str, Any]] = None) -> SparkResult:
        """One DuckDB statement (report.py's few inline ones), translated and run."""
        return SparkResult(_sql(self.spark, translate.render(ENGINE, translate.tree(ENGINE, text), params or {})))

    def run_file(self, name: str, params: Dict[str, Any]) -> SparkResult:
        return SparkResult(self.frame(name, params))

    def frame(self, name: str, params: Dict[str, Any]):
        """sql/<name> (or its sql/_spark/ override) as a Spark DataFrame."""
        return _sql(self.spark, translate.render(ENGINE, translate.file_tree(ENGINE, name), params))

    def materialize_file(self, name: str, table: str, params: Dict[str, Any]) -> None:
        """The table computed once (a local checkpoint: later files read it, not its plan)."""
        with _spark_errors():
            self._view(table, self.frame(name, params).localCheckpoint())

    def register(self, name: str, table) -> None:
        """An Arrow table as a view (the bootstrap's replicate weights)."""
        self._view(name, self._frame(table.to_pylist(), table.schema))

    def unregister(self, name: str) -> None:
        self.spark.catalog.dropTempView(name)

    def close(self) -> None:
        """Drop the views this connection made and the tables it registered or materialized."""
        for name in dict.fromkeys(self._views):
            self.spark.catalog.dropTempView(name)
        self._views = []


class SparkConnection(SparkSQL):
    """Views decisions, cases, errors, runs and slice_sets over committed runs, as Warehouse.connect."""

    def __init__(self, spark, wh, run_ids: Optional[List[str]] = None, variants: bool = False):
        super().__init__(spark)
        duck = connect(wh, run_ids, variants)          # the damage check, and the runs rows (incomplete too)
        runs = duck.sql("SELECT * FROM runs").to_arrow_table()
        duck.close()
        ids = [r for r in runs.column("run_id").to_pylist()]
        self._view("runs", self._frame(runs.to_pylist(), runs.schema))
        decisions = self._read(store_schema.DECISION_SCHEMA, {rid: wh.case_files(rid) for rid in ids})
        if run_ids is not None and not variants and "robustness" in runs.column("kind").to_pylist():
            decisions = decisions.where("variant IS NULL OR variant = 'baseline'")
        self._view("decisions", decisions)
        self._view("slice_sets", self._read(store_schema.SLICE_SET_SCHEMA,
                                            {rid: wh.slice_set_files(rid) for rid in ids}))
        self._view("cases", self.spark.sql("SELECT * FROM decisions WHERE error IS NULL AND qid IS NOT NULL"))
        self._view("errors", self.spark.sql("SELECT * FROM decisions WHERE error IS NOT NULL"))

    def _read(self, schema, files: Dict[str, list]):
        """Each run's Parquet files read with the full schema (columns an older file lacks read as
        nulls, as DuckDB's union_by_name), plus its run_id from the partition it was listed under."""
        from pyspark.sql import functions as F
        from pyspark.sql.pandas.types import from_arrow_schema

        spark_schema = from_arrow_schema(schema)
        frames = []
        for rid, paths in files.items():
            paths = [_GLOB.sub(r"\\\1", str(p.resolve())) for p in paths if p.is_file()]
            if paths:
                frame = self.spark.read.schema(spark_schema).option("recursiveFileLookup", "true").parquet(*paths)
                frames.append(frame.withColumn("run_id", F.lit(rid)))
        if not frames:
            return self.spark.createDataFrame([], schema=spark_schema).withColumn("run_id", F.lit(None).cast("string"))
        out = frames[0]
        for frame in frames[1:]:
            out = out.unionByName(frame)
        return out
