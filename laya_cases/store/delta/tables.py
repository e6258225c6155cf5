"""Delta Lake tables of a table-format warehouse: three tables, one Delta transaction per table per run.
cases and slice_sets are partitioned by run_id and writer_id (a report opens its run's files only);
runs is one small unpartitioned table (a run adds a file of one row; `gc` compacts them into one).

A run commits its cases, then its slice sets, then its runs row: the runs row is the commit point,
exactly as the runs entry is in a local warehouse. `writer_id` is a random id of the process that wrote
the run; the runs row names it, and every reader joins cases and slice sets to runs on
(run_id, writer_id). So rows of a writer that died before its runs row (or lost a race for its run id)
are never read, by laya-cases or by the documented readers (docs/readers.md). Each commit is
atomic across hosts: deltalake creates the next `_delta_log/<version>.json` with a conditional put and
retries on a conflict (appends to different partitions never conflict).
"""
from __future__ import annotations

import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from laya_cases.core.errors import UsageError
from laya_cases.interop.extras import install_hint
from laya_cases.store.schema import DECISION_SCHEMA, RUN_SCHEMA, SLICE_SET_SCHEMA, float_columns
from laya_cases.store.delta.url import Location

WRITER = "writer_id"
PARTITION_BY = ["run_id", WRITER]
_RETRIES = 8
_BATCH_ROWS = 1 << 16


def _deltalake():
    try:
        import deltalake
    except ImportError:
        raise UsageError("an object-store warehouse needs the deltalake package: "
                         + install_hint("objstore")) from None
    return deltalake


def table_schema(name: str) -> pa.Schema:
    """A table's Delta schema: the local layout's columns, then run_id (cases, slice_sets), then writer_id."""
    if name == "runs":
        return RUN_SCHEMA.append(pa.field(WRITER, pa.string()))
    base = DECISION_SCHEMA if name == "cases" else SLICE_SET_SCHEMA
    return base.append(pa.field("run_id", pa.string())).append(pa.field(WRITER, pa.string()))


def writer_properties(schema: pa.Schema):
    """zstd, and no min/max statistics on floating-point columns (store_write.parquet_options says why:
    Parquet statistics leave NaN out, so a reader's pruning could drop NaN rows)."""
    dl = _deltalake()
    off = dl.ColumnProperties(statistics_enabled="NONE")
    return dl.WriterProperties(compression="ZSTD", column_properties={name: off for name in float_columns(schema)})


def _config(schema: pa.Schema) -> Dict[str, str]:
    """Table properties: file statistics in the Delta log only for the columns without floats."""
    floats = float_columns(schema)
    return {"delta.dataSkippingStatsColumns": ",".join(n for n in schema.names if n not in floats)}


def _retry(what: str, action):
    """Run `action` again when a concurrent commit of another writer changed the table under it."""
    dl = _deltalake()
    for attempt in range(_RETRIES):
        try:
            return action()
        except dl.exceptions.CommitFailedError as exc:
            if attempt == _RETRIES - 1:
                raise UsageError("%s: %d commits in a row lost to concurrent writers: %s"
                                 % (what, _RETRIES, str(exc).splitlines()[0])) from None
            time.sleep(0.05 * (attempt + 1))


def open_table(loc: Location, name: str):
    """The table's latest committed version; None when it does not exist yet."""
    dl = _deltalake()
    try:
        return dl.DeltaTable(loc.table(name), storage_options=loc.storage_options())
    except dl.exceptions.TableNotFoundError:
        return None
    except (OSError, dl.exceptions.DeltaError) as exc:
        raise UsageError("cannot read warehouse %s: %s" % (loc.base, str(exc).splitlines()[0])) from None


def ensure_tables(loc: Location) -> None:
    """Create the three tables when missing (many writers may race to create one: the losers find it)."""
    dl = _deltalake()
    for name in ("cases", "slice_sets", "runs"):
        if open_table(loc, name) is not None:
            continue
        schema = table_schema(name)
        parts = None if name == "runs" else PARTITION_BY
        _retry("creating table %s" % loc.table(name), lambda: dl.DeltaTable.create(
            loc.table(name), schema, mode="ignore", partition_by=parts, configuration=_config(schema),
            storage_options=loc.storage_options()))


def _batches(files: Sequence[str], schema: pa.Schema, run_id: str, writer: str) -> Iterator[pa.RecordBatch]:
    """The staged Parquet files' rows with run_id and writer_id appended, a batch at a time."""
    for path in files:
        with pq.ParquetFile(path) as handle:
            for batch in handle.iter_batches(batch_size=_BATCH_ROWS):
                n = batch.num_rows
                columns = batch.columns + [pa.array([run_id] * n, pa.string()), pa.array([writer] * n, pa.string())]
                yield pa.RecordBatch.from_arrays(columns, schema=schema)


def append(loc: Location, name: str, files: Sequence[str], run_id: str, writer: str) -> None:
    """One Delta transaction adding the staged files' rows to table `name` (nothing when they have none)."""
    if not any(pq.ParquetFile(f).metadata.num_rows for f in files):
        return
    dl = _deltalake()
    schema = table_schema(name)
    _retry("committing %s of run %s" % (name, run_id), lambda: dl.write_deltalake(
        loc.table(name), pa.RecordBatchReader.from_batches(schema, _batches(files, schema, run_id, writer)),
        mode="append", partition_by=PARTITION_BY, writer_properties=writer_properties(schema),
        schema_mode="merge", storage_options=loc.storage_options()))  # a table made before a new optional
                                                                      # column (source_item_id) gains it


def commit_runs_row(loc: Location, row: Dict[str, object], writer: str) -> bool:
    """The commit point: add the run's row unless a row with its run_id is there. A merge reads the
    table, so of two writers committing one id at once the second's commit conflicts, is retried, and
    finds the first's row. Returns whether this writer's row went in."""
    dl = _deltalake()
    source = pa.Table.from_pylist([dict(row, writer_id=writer)], schema=table_schema("runs"))

    def merge() -> int:
        table = dl.DeltaTable(loc.table("runs"), storage_options=loc.storage_options())
        metrics = (table.merge(source, predicate="t.run_id = s.run_id", source_alias="s", target_alias="t",
                               writer_properties=writer_properties(source.schema))
                   .when_not_matched_insert_all().execute())
        return int(metrics.get("num_target_rows_inserted", 0))
    return bool(_retry("committing run %s" % row["run_id"], merge))


# ---------------------------------------------------------------------------- reading
def arrow_filesystem(loc: Location, name: str):
    """Arrow's own file system (S3 or local) rooted at table `name`, for the table's datasets.

    Without it deltalake hands Arrow a file system written in Python; an Arrow I/O thread still inside
    it when the interpreter exits ends the process with SIGABRT (seen in about 1 run in 10 under load).
    The S3 settings are the storage options' (url.storage_options): the same endpoint, keys and region."""
    import pyarrow.fs as pafs

    path = loc.table(name)
    if loc.scheme == "file":
        return pafs.SubTreeFileSystem(path[len("file://"):], pafs.LocalFileSystem())
    opts = loc.storage_options()
    kwargs: Dict[str, Any] = {"access_key": opts.get("AWS_ACCESS_KEY_ID"),
                              "secret_key": opts.get("AWS_SECRET_ACCESS_KEY"),
                              "session_token": opts.get("AWS_SESSION_TOKEN"), "region": opts.get("AWS_REGION")}
    endpoint = opts.get("AWS_ENDPOINT_URL")
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        kwargs.update(endpoint_override=host.rstrip("/") if host else endpoint, scheme=scheme if host else "https")
    elif kwargs["region"] is None:               # AWS itself, no region set: the bucket's, as deltalake finds it
        try:
            kwargs["region"] = pafs.resolve_s3_region(path[len("s3://"):].split("/", 1)[0])
        except OSError:
            pass
    s3 = pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})
    return pafs.SubTreeFileSystem(path[len("s3://"):], s3)


def runs(loc: Location, run_ids: Optional[Sequence[str]] = None) -> pa.Table:
    """The committed runs rows (all, or those of `run_ids`), RUN_SCHEMA plus writer_id, by run_id."""
    table = open_table(loc, "runs")
    if table is None:
        return table_schema("runs").empty_table()
    dataset = table.to_pyarrow_dataset(filesystem=arrow_filesystem(loc, "runs"))
    filt = pads.field("run_id").isin(list(run_ids)) if run_ids is not None else None
    got = dataset.to_table(filter=filt).select(table_schema("runs").names).cast(table_schema("runs"))
    return got.sort_by("run_id")


def committed(loc: Location, name: str, pairs: List[Tuple[str, str]]) -> Optional[pads.Dataset]:
    """Table `name` (cases or slice_sets) as a dataset filtered to the committed (run_id, writer_id)
    pairs: files of other pairs are never opened. None when the table is missing or `pairs` is empty."""
    table = open_table(loc, name)
    if table is None or not pairs:
        return None
    dataset = table.to_pyarrow_dataset(filesystem=arrow_filesystem(loc, name))
    filt = None
    for run_id, writer in pairs:
        one = (pads.field("run_id") == run_id) & (pads.field(WRITER) == writer)
        filt = one if filt is None else filt | one
    return dataset.filter(filt)


def compact_runs(loc: Location) -> None:
    """Rewrite the runs table's one-row files as one file (a new version; the rows do not change)."""
    table = open_table(loc, "runs")
    if table is not None:
        _retry("compacting %s" % loc.table("runs"), lambda: open_table(loc, "runs").optimize.compact())
