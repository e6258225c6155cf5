"""A warehouse kept as Delta Lake tables on object storage or a local path (docs/scale.md "Object storage").

`Warehouse(url)` (store/warehouse.py) returns a DeltaTables, these tables as a Warehouse, when `url` is s3://..., s3a://... or delta+file://... (url.py).
It answers the same questions as the local warehouse: writing stages the run's Parquet files locally
(write.StagedRun, in a temporary directory), then commits them as one Delta transaction per table,
the runs row last (tables.py); reading registers the committed rows of the runs asked for under the view
names the whole sql/ library reads (decisions, cases, errors, runs, slice_sets). Runs commit whole:
chunked commits (`run --commit-every/--commit-seconds`) and `--resume` belong to the local layout.
"""
from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import duckdb
import pyarrow as pa

from laya_cases.core.errors import UsageError
from laya_cases.store.schema import DECISION_SCHEMA, INPUT_SCHEMA, RUN_SCHEMA, SLICE_SET_SCHEMA
from laya_cases.store.delta import tables as delta
from laya_cases.store.delta.url import check_warehouse, parse
from laya_cases.store.files import write_table
from laya_cases.store.kind import require
from laya_cases.store.layout import CASE_FILE, check_free, taken, unknown_run_message, validate_run_id
from laya_cases.store.local import LocalWarehouse, cases_of, derived_views
from laya_cases.store.write import StagedRun


class UrlRoot(str):
    """The warehouse's URL where the local code shows, or asks about, a root directory."""

    def exists(self) -> bool:
        return True

    def is_dir(self) -> bool:
        return True


class DeltaTables(LocalWarehouse):
    """The local warehouse's questions answered from Delta tables; what only a directory has is refused."""

    def __init__(self, root):
        check_warehouse(str(root))                     # also for lc.open(URL), not only the CLI's -w
        self.location = parse(str(root))
        self.root = UrlRoot(self.location.name)        # type: ignore[assignment]
        self.damaged: Dict[str, str] = {}

    # ------------------------------------------------------------------ what only a directory has
    def _local_only(self, *_args, **_kwargs):
        raise UsageError("warehouse %s is a table-format warehouse: this command reads a local warehouse's "
                         "files (use a directory, or read the tables as docs/readers.md shows)" % self.root)

    case_partition = run_entry = run_file = slice_set_partition = progress_entry = progress_file = _local_only
    slice_set_files = slice_set_file = case_files = _local_only
    cases_dir = runs_dir = slice_sets_dir = staging_dir = progress_dir = relabels_file = property(_local_only)

    # ------------------------------------------------------------------ reading
    def _own_directory(self) -> None:
        """A delta+file:// directory that a local warehouse has written is refused (kind.py)."""
        if self.location.scheme == "file":
            require(self.location.base[len("file://"):], "delta", str(self.root))

    def run_ids(self) -> List[str]:
        self._own_directory()
        return delta.runs(self.location).column("run_id").to_pylist()

    def has_run(self, run_id: str) -> bool:
        self._own_directory()
        return delta.runs(self.location, [run_id]).num_rows > 0

    def run_state(self, run_id: str) -> Optional[str]:
        return "complete" if self.has_run(run_id) else None

    def incomplete_ids(self) -> List[str]:
        return []

    def stamp(self, run_id: str) -> tuple:
        """A committed Delta run is never rewritten: its id cannot be committed twice (commit_runs_row)."""
        return (run_id,)

    def run_row(self, run_id: str) -> Dict[str, object]:
        self.require_run(run_id)
        return delta.runs(self.location, [run_id]).to_pylist()[0]

    def case_frame(self, run_id: str):
        """LocalWarehouse.case_frame from the cases table: the run's committed rows, read when collected."""
        import polars as pl

        self.require_run(run_id)
        runs = delta.runs(self.location, [run_id])
        data = delta.committed(self.location, "cases", [(run_id, runs.column(delta.WRITER)[0].as_py())])
        names = DECISION_SCHEMA.names
        frame = (pl.from_arrow(DECISION_SCHEMA.empty_table()).lazy() if data is None
                 else pl.scan_pyarrow_dataset(data).select(names))
        return cases_of(frame, run_id)

    def require_run(self, run_id: str, incomplete: bool = False) -> str:
        validate_run_id(run_id)
        if not self.has_run(run_id):
            raise UsageError(unknown_run_message(run_id, self.root, self.run_ids()))
        return run_id

    def connect(self, run_ids: Optional[List[str]] = None, variants: bool = False,
                runs_only: bool = False) -> duckdb.DuckDBPyConnection:
        """LocalWarehouse.connect's views over the committed rows of the runs asked for (all when None). Named
        runs (a report, a diff) are read once into memory; all runs are read lazily, query by query (so
        `runs_only` changes nothing here: the other views cost nothing until read)."""
        self._own_directory()
        runs = delta.runs(self.location, run_ids)
        pairs = list(zip(runs.column("run_id").to_pylist(), runs.column(delta.WRITER).to_pylist()))
        con = duckdb.connect()
        _register(con, "runs", runs.select(RUN_SCHEMA.names), RUN_SCHEMA.names)
        eager = run_ids is not None
        for view, table, schema in (("decisions", "cases", DECISION_SCHEMA),
                                    ("slice_sets", "slice_sets", SLICE_SET_SCHEMA)):
            names = schema.names + ["run_id"]
            empty = schema.append(pa.field("run_id", pa.string())).empty_table()
            data = delta.committed(self.location, table, pairs)
            if data is not None and eager:
                try:
                    data = data.to_table(columns=names)
                except OSError as exc:            # a data file the log names is gone or unreadable
                    raise UsageError("warehouse %s: table %s is damaged: %s" % (
                        self.root, table, str(exc).splitlines()[0][:300])) from None
            _register(con, view, empty if data is None else data, names)
        _register(con, "inputs", INPUT_SCHEMA.empty_table(), INPUT_SCHEMA.names)     # kept by local stores only
        derived_views(con, bool(eager and not variants and runs.num_rows
                                and "robustness" in runs.column("kind").to_pylist()))
        return con

    # ------------------------------------------------------------------ writing
    def stage(self, run_id: str, resume: bool = False):
        self._own_directory()
        return _stage(self, run_id, resume)

    def gc(self) -> Dict[str, List[str]]:
        """The runs table compacted into one file, then Delta's vacuum on each table: removes the data files no committed version refers to (those a
        killed writer uploaded before its commit) once they are older than deltalake's retention (7 days,
        so a writer still uploading is never touched). Rows of writers that died between their table
        commits stay in the tables, read by no one (every reader joins through runs)."""
        self._own_directory()
        removed: Dict[str, List[str]] = {"staging": [], "orphans": [], "moved": []}
        delta.compact_runs(self.location)
        for name in ("cases", "slice_sets", "runs"):
            table = delta.open_table(self.location, name)
            if table is not None:
                removed["orphans"] += [self.location.table(name) + "/" + f for f in table.vacuum(dry_run=False)]
        return removed

    def leftovers(self) -> Dict[str, List[str]]:
        return {"staging": [], "orphans": []}


def _register(con: duckdb.DuckDBPyConnection, view: str, data, names: List[str]) -> None:
    """CREATE VIEW view over an Arrow table or dataset, its columns in the local layout's order."""
    con.register("_delta_" + view, data)
    columns = ", ".join('"%s"' % n for n in names)
    con.execute('CREATE VIEW %s AS SELECT %s FROM "_delta_%s"' % (view, columns, view))


@contextmanager
def _stage(wh: DeltaTables, run_id: str, resume: bool) -> Iterator["DeltaStagedRun"]:
    """Stage the run in a local temporary directory (removed afterwards, whatever happens)."""
    validate_run_id(run_id)
    if resume:
        raise UsageError("--resume continues a run committed in chunks, which only a local warehouse "
                         "directory keeps; %s commits each run whole" % wh.root)
    check_free(wh, run_id)
    path = Path(tempfile.mkdtemp(prefix="laya-cases-%s." % run_id))
    staged = None
    try:
        staged = DeltaStagedRun(wh, run_id, path)
        yield staged
    finally:
        if staged is not None:
            staged.close()
            staged.release()
        shutil.rmtree(path, ignore_errors=True)


class DeltaStagedRun(StagedRun):
    """A run staged as local Parquet files, committed as Delta transactions (cases, slice sets, runs)."""

    def __init__(self, warehouse: DeltaTables, run_id: str, path: Path):
        super().__init__(warehouse, run_id, path)
        self.writer_id = secrets.token_hex(8)

    def commit_chunk(self, run_row: Dict[str, object], rows_committed: int, resume: Dict[str, object]) -> bool:
        """No chunks: the run stays staged and commits whole (the writer keeps its part file open)."""
        return False

    def commit(self, run_row: Dict[str, object], inputs=None) -> None:
        """The run as Delta transactions; the dataset's inputs (store/inputs.py) are a local store's only."""
        self.close()
        if self.rows_written == 0:
            write_table(DECISION_SCHEMA.empty_table(), self.cases_path / CASE_FILE)
        self.write_set_part(force=True)
        wh: DeltaTables = self.warehouse      # type: ignore[assignment]
        loc, rid = wh.location, self.run_id
        check_free(wh, rid)
        delta.ensure_tables(loc)
        delta.append(loc, "cases", _files(self.cases_path), rid, self.writer_id)
        delta.append(loc, "slice_sets", _files(self.sets_path), rid, self.writer_id)
        if not delta.commit_runs_row(loc, dict(run_row, run_id=rid), self.writer_id):      # the commit point
            raise taken(rid, wh.root, " (another writer committed it first; this writer's rows are not visible)")
        self.committed = True


def _files(directory: Path) -> List[str]:
    return [str(directory / n) for n in sorted(os.listdir(directory)) if n.endswith(".parquet")]
