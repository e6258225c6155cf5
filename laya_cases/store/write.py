"""Writing the warehouse: staging a run, the commit protocol, and removing dead writers' leftovers.

A staging area `_staging/<id>.<pid>.<nonce>/` is locked by its writer (its `writer.lock` file, locks.py)
for the writer's whole life; the system drops the lock when the process dies (even `kill -9`), so
"nobody holds the lock" is how the next commit and `gc` know an area is a leftover. Every Parquet file
is written as `<name>.tmp` and renamed when complete, so no file matching `*.parquet` is ever torn.
Data files and their directories are fsynced before the commit renames, so a power loss cannot commit
a torn file either. A writer may also commit its run in chunks (`commit_chunk`, progress.py): each
chunk is one part file per table and a replaced progress entry; the run is incomplete until `commit`.
"""
from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.store import inputs as run_inputs
from laya_cases.store import progress as run_progress
from laya_cases.store.files import TMP, commit_lock, fsync_path, parquet_options, write_table
from laya_cases.store.layout import (CASE_FILE, LEGACY_SLICE_SET_FILE, PARTITION, ROW_GROUP_ROWS, RUN_FILE,
                                     SLICE_SET_FILE, INCOMPLETE, Layout, check_free, taken,
                                     validate_run_id)
from laya_cases.store.leftovers import LOCK_FILE, orphan_partitions, sweep_staging
from laya_cases.store.locks import lock, unlock
from laya_cases.store.progress import part_name
from laya_cases.store import schema
from laya_cases.store.shards import debris


@contextmanager
def stage(wh: Layout, run_id: str, resume: bool = False) -> Iterator["StagedRun"]:
    """Write a run under _staging; commit() makes it visible; any exception discards it, together with
    every directory this call created (a failed first ingest leaves no warehouse behind). With `resume`,
    the writer takes over the incomplete run `run_id` (its progress entry: `staged.progress`)."""
    validate_run_id(run_id)
    check_free(wh, run_id)
    if not resume and os.path.lexists(wh.progress_file(run_id)):
        raise taken(run_id, wh.root, INCOMPLETE % run_id)
    with staging_area(wh, run_id) as staged:
        if resume:
            staged.progress = run_progress.claim(staged)
        yield staged


@contextmanager
def staging_area(wh: Layout, run_id: str) -> Iterator["StagedRun"]:
    """A new area `_staging/<run>.<pid>.<random>` and its StagedRun, without the checks of `stage` (a
    shard's writer joins a run: shard.ShardRecorder). On leaving, the area goes, and unless the run was
    committed, so does every directory this call created."""
    path = wh.staging_dir / ("%s.%d.%s" % (run_id, os.getpid(), secrets.token_hex(4)))
    for _attempt in range(3):            # a failing writer may remove an empty _staging/ under our feet
        try:
            created = _make_dirs(wh, path)[:-1]          # the area itself goes with rmtree below
            break
        except FileNotFoundError:
            continue
    else:
        raise UsageError("cannot write to warehouse %s: its directories keep vanishing" % wh.root)
    staged = None
    try:
        staged = StagedRun(wh, run_id, path)
        yield staged
    finally:
        if staged is not None:
            staged.close()
        shutil.rmtree(path, ignore_errors=True)
        if staged is not None:
            staged.release()
            shutil.rmtree(path, ignore_errors=True)      # Windows keeps a file that is open: once more
        if staged is None or not staged.committed:
            for directory in reversed(created):
                try:
                    os.rmdir(directory)          # only if still empty: another writer may have arrived
                except OSError:
                    break


def _make_dirs(wh: Layout, path: Path) -> List[Path]:
    """mkdir -p, returning the directories it created (outermost first)."""
    missing = []
    while not path.is_dir():
        if os.path.lexists(path):
            raise UsageError("cannot write to warehouse %s: %s is not a directory" % (wh.root, path))
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    created = []
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not directory.is_dir():
                raise UsageError("cannot write to warehouse %s: %s is not a directory" % (wh.root, directory)) \
                    from None
            continue                             # a concurrent writer made it: not ours to remove
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise UsageError("cannot write to warehouse %s: %s" % (wh.root, exc.strerror or exc)) from None
        created.append(directory)
    return created



class StagedRun:
    def __init__(self, warehouse: Layout, run_id: str, path: Path):
        self.warehouse, self.run_id, self.path = warehouse, run_id, path
        self._lock_fd = os.open(str(path / LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        lock(self._lock_fd)             # held until release(): "this area's writer is alive"
        self.cases_path = path / "cases" / (PARTITION + run_id)
        self.cases_path.mkdir(parents=True)
        self.sets_path = path / "slice_sets" / (PARTITION + run_id)
        self._writer = None                      # a pyarrow ParquetWriter while a part file is open
        self._sets: List = []                    # pyarrow Tables: first row of every slice set seen, for the slice_sets table
        self._seen_sets: set = set()
        self.rows_written = 0
        self.committed = False
        # chunked commits (store/progress.py): the part files committed so far, and whether this writer
        # owns the run's progress entry (after its first chunk, or once it resumed the run)
        self.parts: List[str] = []
        self.set_parts: List[str] = []
        self.chunked = False
        self.progress: Optional[Dict[str, object]] = None      # the entry a resuming writer took over
        self._part = CASE_FILE

    def write(self, batch) -> None:
        """One row group per call (or per ROW_GROUP_ROWS) of a pyarrow RecordBatch or Table; a table is
        written without combining its chunks."""
        import pyarrow.parquet as pq     # here, not at the top: readers (`runs`) import this module, no pyarrow
        

        if batch.num_rows == 0:
            return
        if self._writer is None:
            self._part = part_name(len(self.parts))
            self._writer = pq.ParquetWriter(str(self.cases_path / (self._part + TMP)), schema.DECISION_SCHEMA,
                                            **parquet_options(schema.DECISION_SCHEMA))
        self._writer.write(batch, row_group_size=ROW_GROUP_ROWS)
        self.rows_written += batch.num_rows
        self._note_slice_sets(batch)

    def _note_slice_sets(self, batch) -> None:
        """Keep one row of attributes per slice set, so a report never rescans the run for them."""
        import numpy as np
        import pyarrow as pa
        

        column = batch.column("slice_set")
        ids = (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).to_numpy(zero_copy_only=False)
        ids = np.where(np.isnan(ids), -1, ids).astype(np.int64) if ids.dtype.kind == "f" else ids
        values, first = np.unique(ids, return_index=True)
        fresh = [int(i) for v, i in zip(values, first) if v >= 0 and int(v) not in self._seen_sets]
        if fresh:
            self._seen_sets.update(int(ids[i]) for i in fresh)
            table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
            self._sets.append(table.select(schema.SLICE_SET_SCHEMA.names).take(fresh))

    def close(self) -> Optional[str]:
        """Finish the part file being written; returns its name (None when nothing was written since)."""
        if self._writer is None:
            return None
        self._writer.close()
        self._writer = None
        os.rename(self.cases_path / (self._part + TMP), self.cases_path / self._part)
        return self._part

    def write_set_part(self, force: bool = False) -> Optional[str]:
        """The slice sets first seen since the last part, as the next slice-set part file (its name);
        None when there are none (`force`: an empty file all the same)."""
        import pyarrow as pa
        

        if not self._sets and not force:
            return None
        sets = pa.concat_tables(self._sets).cast(schema.SLICE_SET_SCHEMA) if self._sets else schema.SLICE_SET_SCHEMA.empty_table()
        name = part_name(len(self.set_parts))
        write_table(sets, self.sets_path / name)
        self._sets = []
        return name

    def commit_chunk(self, run_row: Dict[str, object], rows_committed: int, resume: Dict[str, object]) -> bool:
        """Make what was written since the last chunk visible as part of an incomplete run (store/progress.py)."""
        return run_progress.commit_chunk(self, run_row, rows_committed, resume)

    def release(self) -> None:
        """Let go of the area's lock (after the area is gone)."""
        if self._lock_fd is not None:
            unlock(self._lock_fd)
            os.close(self._lock_fd)
            self._lock_fd = None

    def commit(self, run_row: Dict[str, object], inputs=None) -> None:
        """Make the run visible: the dataset's inputs file (`inputs()` builds its schema.INPUT_SCHEMA table,
        called only when the digest has no file yet: store/inputs.py), its cases, then its slice sets, then
        its runs entry (the commit point)."""
        import pyarrow as pa

        digest = run_row.get("labelled_rows_sha256")
        if self.chunked:                 # earlier chunks are committed: add the last one, then the runs entry
            run_inputs.place(self.warehouse, self.path, digest, inputs)
            run_progress.commit_final(self, run_row)
            return
        self.close()
        if self.rows_written == 0:       # an empty partition still needs a file with the schema
            write_table(schema.DECISION_SCHEMA.empty_table(), self.cases_path / CASE_FILE)
        run_row = dict(run_row, run_id=self.run_id)
        sets_path = self.sets_path
        runs_path = self.path / "runs" / (PARTITION + self.run_id)
        self.write_set_part(force=True)
        write_table(pa.Table.from_pylist([run_row], schema=schema.RUN_SCHEMA), runs_path / RUN_FILE)
        for directory in (self.cases_path, sets_path, runs_path):    # the bytes reach the disk before any rename
            for name in os.listdir(directory):
                fsync_path(directory / name)
            fsync_path(directory)
        run_inputs.place(self.warehouse, self.path, digest, inputs)     # before the run: no run without its inputs
        wh = self.warehouse
        with commit_lock(wh):
            run_progress.check_owner(self)       # not committed, and no incomplete run of the id
            sweep_staging(wh, keep=self.path)
            moves = ((self.cases_path, wh.case_partition(self.run_id)),
                     (sets_path, wh.slice_set_partition(self.run_id)),
                     (runs_path, wh.run_entry(self.run_id)))          # last: the commit point
            for source, target in moves:
                if not target.parent.is_dir():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    fsync_path(wh.root)
                if target.exists():      # left by a writer killed between the renames
                    shutil.rmtree(target)
                os.rename(source, target)
                fsync_path(target.parent)
        self.committed = True



def gc(wh: Layout) -> Dict[str, List[str]]:
    """Remove staging areas of dead writers, partitions `run_id=<id>` (cases, slice sets) with neither a runs
    nor a progress entry, part files an incomplete run's progress entry does not list, and progress
    entries of committed runs; nothing else (foreign files and folders stay, incomplete runs too). Returns the removed paths by kind, and under
    "moved" the older layout's slice sets files it moved into their own tree."""
    removed: Dict[str, List[str]] = {"staging": [], "orphans": [], "moved": []}
    if not wh.root.is_dir():                 # nothing to clean, and no directory to create
        return removed
    with commit_lock(wh):
        removed["staging"] = sweep_staging(wh)
        for path in orphan_partitions(wh) + debris(wh):
            shutil.rmtree(path) if path.is_dir() else os.unlink(path)
            removed["orphans"].append(str(path))
        removed["moved"] = move_legacy_slice_sets(wh)
    return removed


def move_legacy_slice_sets(wh: Layout) -> List[str]:
    """runs/run_id=<id>/slice_sets.parquet (older layout) -> slice_sets/run_id=<id>/part-00000.parquet, so
    each runs entry holds one schema (call under the commit lock). The new file is complete before the
    old one goes, and readers prefer the old one while it exists: a crash anywhere leaves a readable run."""
    moved = []
    for run_id in wh.run_ids():
        legacy = wh.run_entry(run_id) / LEGACY_SLICE_SET_FILE
        if not legacy.is_file() or legacy.is_symlink():
            continue
        target = wh.slice_set_partition(run_id) / SLICE_SET_FILE
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(legacy, str(target) + TMP)
            fsync_path(Path(str(target) + TMP))
            os.rename(str(target) + TMP, target)
            fsync_path(target.parent)
        os.unlink(legacy)
        fsync_path(legacy.parent)
        moved.append(str(legacy))
    return moved
