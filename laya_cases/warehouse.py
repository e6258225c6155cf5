"""The warehouse: Hive-partitioned Parquet, one partition per run, committed atomically.

Layout (run first, so a report reads one partition and a comparison reads two):

    <root>/cases/run_id=<id>/part-00000.parquet   decision rows (schema.DECISION_SCHEMA)
    <root>/runs/run_id=<id>/run.parquet           one row: the run's identity and settings
    <root>/runs/run_id=<id>/slice_sets.parquet    what each slice_set id of the run's cases stands for
    <root>/_staging/<id>.<pid>.<nonce>/           a run being written; never read

A run is written entirely under `_staging`, then committed under a short file lock by two
renames: its cases directory, then its runs directory. The runs entry is the commit point:
readers only ever see cases of runs that have one, so a crash (even `kill -9`) at any moment
leaves no partial run visible. Leftovers are removed by the next commit or `gc`.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import UsageError
from .schema import DECISION_SCHEMA, RUN_SCHEMA, SLICE_SET_SCHEMA

ENV_VAR = "LAYA_CASES_WAREHOUSE"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
ROW_GROUP_ROWS = 1 << 20


def resolve_root(option: Optional[str]) -> Path:
    """--warehouse DIR, else $LAYA_CASES_WAREHOUSE, else ./warehouse."""
    return Path(option or os.environ.get(ENV_VAR) or "warehouse")


def validate_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or ".." in run_id:
        raise UsageError("invalid run id %r: use 1-128 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit" % (run_id,))
    return run_id


def new_run_id() -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return "%s-%s" % (now, secrets.token_hex(3))


class Warehouse:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.cases_dir = self.root / "cases"
        self.runs_dir = self.root / "runs"
        self.staging_dir = self.root / "_staging"

    # ------------------------------------------------------------------ reading
    def run_ids(self) -> List[str]:
        """Committed run ids, sorted."""
        if not self.runs_dir.is_dir():
            return []
        out = []
        for entry in self.runs_dir.iterdir():
            if entry.name.startswith("run_id=") and (entry / "run.parquet").is_file():
                out.append(entry.name[len("run_id="):])
        return sorted(out)

    def has_run(self, run_id: str) -> bool:
        return (self.runs_dir / ("run_id=" + run_id) / "run.parquet").is_file()

    def require_run(self, run_id: str) -> str:
        validate_run_id(run_id)
        if not self.has_run(run_id):
            known = self.run_ids()
            hint = ("; known runs: %s" % ", ".join(known[-5:])) if known else "; the warehouse is empty"
            raise UsageError("unknown run id %r in warehouse %s%s" % (run_id, self.root, hint))
        return run_id

    def connect(self, run_ids: Optional[List[str]] = None) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with views `decisions` (every record), `cases` (records that are
        cases), `errors` (failed calls and missing answers) and `runs`, over committed runs (all, or the ones named)."""
        from .sql import prepare_connection

        ids = self.run_ids() if run_ids is None else list(run_ids)
        con = duckdb.connect()
        prepare_connection(con)
        case_files = [str(p) for rid in ids
                      for p in sorted((self.cases_dir / ("run_id=" + rid)).glob("*.parquet"))]
        run_files = [str(self.runs_dir / ("run_id=" + rid) / "run.parquet") for rid in ids]
        if case_files:
            con.execute("CREATE VIEW decisions AS SELECT * FROM read_parquet(%s, hive_partitioning = true, "
                        "hive_types = {'run_id': VARCHAR}, union_by_name = true)" % _sql_list(case_files))
        else:
            empty = DECISION_SCHEMA.empty_table().append_column("run_id", pa.array([], pa.string()))
            con.register("_empty_decisions", empty)
            con.execute("CREATE VIEW decisions AS SELECT * FROM _empty_decisions")
        if run_files:
            con.execute("CREATE VIEW runs AS SELECT * FROM read_parquet(%s)" % _sql_list(run_files))
            set_files = [str(Path(f).parent / "slice_sets.parquet") for f in run_files]
            con.execute("CREATE VIEW slice_sets AS SELECT * FROM read_parquet(%s, hive_partitioning = true, "
                        "hive_types = {'run_id': VARCHAR})" % _sql_list(set_files))
        else:
            con.register("_empty_runs", RUN_SCHEMA.empty_table())
            con.execute("CREATE VIEW runs AS SELECT * FROM _empty_runs")
            empty = SLICE_SET_SCHEMA.empty_table().append_column("run_id", pa.array([], pa.string()))
            con.register("_empty_slice_sets", empty)
            con.execute("CREATE VIEW slice_sets AS SELECT * FROM _empty_slice_sets")
        con.execute("CREATE VIEW cases AS SELECT * FROM decisions WHERE error IS NULL AND qid IS NOT NULL")
        con.execute("CREATE VIEW errors AS SELECT * FROM decisions WHERE error IS NOT NULL")
        return con

    # ------------------------------------------------------------------ writing
    @contextmanager
    def stage(self, run_id: str) -> Iterator["StagedRun"]:
        """Write a run under _staging; commit() makes it visible; any exception discards it."""
        validate_run_id(run_id)
        if self.has_run(run_id):
            raise UsageError("run id %r already exists in warehouse %s" % (run_id, self.root))
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        path = self.staging_dir / ("%s.%d.%s" % (run_id, os.getpid(), secrets.token_hex(4)))
        path.mkdir()
        staged = StagedRun(self, run_id, path)
        try:
            yield staged
        finally:
            staged.close()
            shutil.rmtree(path, ignore_errors=True)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".commit.lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def gc(self) -> Dict[str, int]:
        """Remove staging areas of dead writers and case partitions no run entry points at."""
        removed = {"staging": 0, "orphans": 0}
        with self._lock():
            if self.staging_dir.is_dir():
                for entry in self.staging_dir.iterdir():
                    parts = entry.name.rsplit(".", 2)
                    pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else -1
                    if not _alive(pid):
                        shutil.rmtree(entry, ignore_errors=True)
                        removed["staging"] += 1
            if self.cases_dir.is_dir():
                for entry in self.cases_dir.iterdir():
                    rid = entry.name[len("run_id="):]
                    if not self.has_run(rid):
                        shutil.rmtree(entry, ignore_errors=True)
                        removed["orphans"] += 1
        return removed


class StagedRun:
    def __init__(self, warehouse: Warehouse, run_id: str, path: Path):
        self.warehouse, self.run_id, self.path = warehouse, run_id, path
        self.cases_path = path / "cases" / ("run_id=" + run_id)
        self.cases_path.mkdir(parents=True)
        self._writer: Optional[pq.ParquetWriter] = None
        self._sets: List[pa.Table] = []          # first row of every slice set seen, for slice_sets.parquet
        self._seen_sets: set = set()
        self.rows_written = 0
        self.committed = False

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(str(self.cases_path / "part-00000.parquet"), DECISION_SCHEMA,
                                            compression="zstd")
        self._writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
        self.rows_written += batch.num_rows
        self._note_slice_sets(batch)

    def _note_slice_sets(self, batch: pa.RecordBatch) -> None:
        """Keep one row of attributes per slice set, so a report never rescans the run for them."""
        ids = batch.column("slice_set").to_numpy(zero_copy_only=False)
        ids = np.where(np.isnan(ids), -1, ids).astype(np.int64) if ids.dtype.kind == "f" else ids
        values, first = np.unique(ids, return_index=True)
        fresh = [int(i) for v, i in zip(values, first) if v >= 0 and int(v) not in self._seen_sets]
        if fresh:
            self._seen_sets.update(int(ids[i]) for i in fresh)
            self._sets.append(pa.Table.from_batches([batch]).select(SLICE_SET_SCHEMA.names).take(fresh))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def commit(self, run_row: Dict[str, object]) -> None:
        """Make the run visible: cases partition first, then the runs entry (the commit point)."""
        self.close()
        if self.rows_written == 0:       # an empty partition still needs a file with the schema
            pq.write_table(DECISION_SCHEMA.empty_table(), str(self.cases_path / "part-00000.parquet"))
        run_row = dict(run_row, run_id=self.run_id)
        runs_path = self.path / "runs" / ("run_id=" + self.run_id)
        runs_path.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([run_row], schema=RUN_SCHEMA), str(runs_path / "run.parquet"))
        sets = pa.concat_tables(self._sets).cast(SLICE_SET_SCHEMA) if self._sets else SLICE_SET_SCHEMA.empty_table()
        pq.write_table(sets, str(runs_path / "slice_sets.parquet"))
        wh = self.warehouse
        with wh._lock():
            if wh.has_run(self.run_id):
                raise UsageError("run id %r already exists in warehouse %s" % (self.run_id, wh.root))
            wh.cases_dir.mkdir(parents=True, exist_ok=True)
            wh.runs_dir.mkdir(parents=True, exist_ok=True)
            target = wh.cases_dir / ("run_id=" + self.run_id)
            if target.exists():          # left by a writer killed between the two renames
                shutil.rmtree(target)
            os.rename(self.cases_path, target)
            _fsync_dir(wh.cases_dir)
            os.rename(runs_path, wh.runs_dir / ("run_id=" + self.run_id))
            _fsync_dir(wh.runs_dir)
        self.committed = True


def _sql_list(paths: List[str]) -> str:
    return "[%s]" % ", ".join("'%s'" % p.replace("'", "''") for p in paths)


def _fsync_dir(path: Path) -> None:
    fd = os.open(str(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
