"""Incomplete runs: a run committed in chunks as it goes, and what readers and `gc` make of it.

A writer that commits in chunks (`laya-cases run`, every --commit-every dataset rows or
--commit-seconds) makes each chunk visible atomically, under the commit lock:

    cases/run_id=<id>/part-<k>.parquet        the chunk's decision rows (renamed in, complete)
    slice_sets/run_id=<id>/part-<j>.parquet   the slice sets first seen in the chunk (if any)
    _progress/run_id=<id>/progress.json       replaced whole (os.replace): the chunk's commit point

The progress entry lists the committed part files (a part it does not list is debris of a writer
killed mid-commit), how many dataset rows are committed (always a runner-call boundary), the run
row as it would read now, and the run's resume identity. A run with a progress entry and no runs
entry is **incomplete**: readers that keep the runs in the runs table (docs/readers.md) never see
it; laya-cases reports it (saying so), refuses it to gates, keeps it from `gc`, checks it, and
`laya-cases run --resume <id>` continues it. The final commit moves the last part in, renames the
runs entry in (the run's commit point, as for a one-shot run) and then removes the progress entry.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError, shorten, shorten_path
from laya_cases.store.files import commit_lock, ensure_dir, fsync_path, move, write_table
from laya_cases.store.layout import INCOMPLETE, PARTITION, PROGRESS_FILE, RUN_FILE, check_free, is_run_id, taken
from laya_cases.store.leftovers import sweep_staging, writer_alive
from laya_cases.store import schema


FORMAT = "laya-cases-progress/1"
_PART = re.compile(r"^part-(s\d{4,}-)?\d{5,}\.parquet$")          # part-s<I>-<k>: shard I's (store/shards.py)
_PART_ORTMP = re.compile(r"^part-(s\d{4,}-)?\d{5,}\.parquet(\.tmp)?$")
_FIELDS = {"format": str, "run_id": str, "writer": str, "rows_committed": int, "parts": list,
           "slice_set_parts": list, "run": dict, "resume": dict}


class ProgressError(Exception):
    """An unreadable progress entry: str() is `<path>: <what is wrong>`."""


def part_name(k: int) -> str:
    """The k-th part file of a run's partition (`part-00000.parquet` first, as a one-shot run writes it)."""
    return "part-%05d.parquet" % k


# ---------------------------------------------------------------------------- reading
def read(wh, run_id: str) -> Optional[Dict[str, Any]]:
    """The run's progress entry, None when it has none; raises ProgressError when it is unreadable."""
    path = wh.progress_file(run_id)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ProgressError("%s: %s" % (path, exc.strerror or exc)) from None
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProgressError("%s: not a readable progress entry (%s)" % (path, str(exc)[:120])) from None
    problem = _shape_problem(entry, run_id)
    if problem:
        raise ProgressError("%s: %s" % (path, problem))
    return entry


def read_quiet(wh, run_id: str) -> Optional[Dict[str, Any]]:
    """read(), with an unreadable entry as None (its run then reads as damaged, see store_check)."""
    try:
        return read(wh, run_id)
    except ProgressError:
        return None


def _shape_problem(entry: Any, run_id: str) -> Optional[str]:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return "not a %s entry" % FORMAT
    for key, kind in _FIELDS.items():
        value = entry.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            return "field %r is missing or not a%s %s" % (key, "n" if kind is int else "", kind.__name__)
    if entry["run_id"] != run_id:
        return "run_id is %s, not the directory's %r" % (shorten(repr(entry["run_id"])), run_id)
    names = entry["parts"] + entry["slice_set_parts"]
    if not entry["parts"] or not all(isinstance(n, str) and _PART.match(n) for n in names):
        return "lists no case file, or a file that is not named part-<k>.parquet"
    lacking = [f.name for f in schema.RUN_SCHEMA if f.name not in entry["run"]]
    if lacking:
        return "its run row lacks %s" % ", ".join(lacking[:5])
    return None


def incomplete_ids(wh) -> List[str]:
    """Run ids with a progress entry and no runs entry, sorted (an unreadable entry counts too)."""
    try:
        names = os.listdir(wh.progress_dir)
    except OSError:
        return []
    ids = [n[len(PARTITION):] for n in names if n.startswith(PARTITION)]
    return sorted(rid for rid in ids if is_run_id(rid) and wh.progress_file(rid).is_file() and not wh.has_run(rid))


def run_row(entry: Dict[str, Any]) -> Dict[str, Any]:
    """The runs-table row of an incomplete run: settings_json also says `complete: false` and how many
    dataset rows are committed, so a report of it carries both in extensions.run."""
    row = dict(entry["run"], run_id=entry["run_id"])
    try:
        settings = json.loads(row.get("settings_json") or "{}")
    except ValueError:
        settings = {}
    settings = dict(settings if isinstance(settings, dict) else {}, complete=False,
                    rows_committed=entry["rows_committed"])
    row["settings_json"] = json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str)
    return row


def describe(entry: Dict[str, Any]) -> str:
    """`run 'X' is incomplete: k of N dataset row(s) committed`; a sharded run's names its missing shards."""
    if is_sharded(entry):
        left = missing(entry)
        return "run %r is incomplete: shard%s %s of %d %s missing (%d of %s dataset row(s) committed)" % (
            entry["run_id"], "s" if len(left) > 1 else "", ", ".join(map(str, left)), entry["shards"]["count"],
            "are" if len(left) > 1 else "is", entry["rows_committed"], entry["run"].get("n_rows"))
    return "run %r is incomplete: %d of %s dataset row(s) committed" % (
        entry["run_id"], entry["rows_committed"], entry["run"].get("n_rows"))


def resume_hint(wh, run_id: str) -> str:
    """One line: the run is incomplete, and how to finish it."""
    entry = read_quiet(wh, run_id)
    head = describe(entry) if entry else "run %r is incomplete" % run_id
    dataset = (entry or {}).get("run", {}).get("dataset") or "DATASET"
    if entry and isinstance(entry.get("shards"), dict):
        return "%s; `laya-cases run %s ... --shard I/%d --run-id %s` runs a missing shard" % (
            head, shorten_path(dataset), entry["shards"]["count"], run_id)
    return "%s; `laya-cases run %s ... --resume %s` finishes it" % (head, shorten_path(dataset), run_id)


# ---------------------------------------------------------------------------- writing (under the commit lock)
def commit_chunk(staged, run: Dict[str, Any], rows_committed: int, resume: Dict[str, Any]) -> bool:
    """Commit what `staged` wrote since its last chunk: the case part, the slice sets it first saw, then
    the progress entry (the commit point). Returns False when there was nothing to commit."""
    case_name = staged.close()
    if case_name is None:
        return False
    set_name = staged.write_set_part()
    entry = {"format": FORMAT, "run_id": staged.run_id, "writer": staged.path.name,
             "rows_committed": rows_committed, "parts": staged.parts + [case_name],
             "slice_set_parts": staged.set_parts + ([set_name] if set_name else []),
             "run": dict(run, run_id=staged.run_id), "resume": resume}
    tmp = _write_entry(staged.path, entry)
    _fsync_new(staged, case_name, set_name)
    wh = staged.warehouse
    with commit_lock(wh):
        check_owner(staged)
        sweep_staging(wh, keep=staged.path)
        if not staged.chunked:                   # the run's first chunk: partitions no entry owns are debris
            for partition in (wh.case_partition(staged.run_id), wh.slice_set_partition(staged.run_id)):
                if partition.exists():
                    shutil.rmtree(partition)
        move(staged.cases_path / case_name, wh.case_partition(staged.run_id) / case_name)
        if set_name:
            move(staged.sets_path / set_name, wh.slice_set_partition(staged.run_id) / set_name)
        move(tmp, wh.progress_file(staged.run_id))          # the chunk's commit point
    staged.parts.append(case_name)
    if set_name:
        staged.set_parts.append(set_name)
    staged.chunked = True
    fsync_path(staged.path)
    return True


def commit_final(staged, run: Dict[str, Any]) -> None:
    """The last chunk and the runs entry (the run's commit point), then the progress entry goes."""
    import pyarrow as pa

    case_name = staged.close()
    set_name = staged.write_set_part(force=not staged.set_parts)
    runs_path = staged.path / "runs" / (PARTITION + staged.run_id)
    write_table(pa.Table.from_pylist([dict(run, run_id=staged.run_id)], schema=schema.RUN_SCHEMA), runs_path / RUN_FILE)
    _fsync_new(staged, case_name, set_name)
    fsync_path(runs_path / RUN_FILE)
    fsync_path(runs_path)
    wh = staged.warehouse
    with commit_lock(wh):
        check_owner(staged)
        sweep_staging(wh, keep=staged.path)
        if case_name:
            move(staged.cases_path / case_name, wh.case_partition(staged.run_id) / case_name)
        if set_name:
            move(staged.sets_path / set_name, wh.slice_set_partition(staged.run_id) / set_name)
        target = wh.run_entry(staged.run_id)
        ensure_dir(target.parent)
        if target.exists():                      # a runs entry without its run.parquet: debris
            shutil.rmtree(target)
        os.rename(runs_path, target)             # the run's commit point
        fsync_path(target.parent)
        shutil.rmtree(wh.progress_entry(staged.run_id), ignore_errors=True)
        fsync_path(wh.progress_dir)
    staged.committed = True


def claim(staged) -> Dict[str, Any]:
    """Take over an incomplete run for `staged` (a resuming writer): its previous writer must be gone.
    Part files the entry does not list (a writer killed mid-commit) are removed; returns the entry."""
    wh, rid = staged.warehouse, staged.run_id
    with commit_lock(wh):
        if wh.has_run(rid):
            raise UsageError("run %r is complete in warehouse %s: nothing to resume" % (rid, wh.root))
        try:
            entry = read(wh, rid)
        except ProgressError as exc:
            raise UsageError("cannot resume run %r: %s" % (rid, exc)) from None
        if entry is None:
            raise UsageError("cannot resume run %r: no incomplete run with that id in warehouse %s" % (rid, wh.root))
        if writer_alive(wh, entry["writer"]):
            raise UsageError("cannot resume run %r: another process is writing it (%s)"
                             % (rid, wh.staging_dir / entry["writer"]))
        for partition, listed in ((wh.case_partition(rid), entry["parts"]),
                                  (wh.slice_set_partition(rid), entry["slice_set_parts"])):
            for path in stray_parts(partition, listed):
                os.unlink(path)
            if partition.is_dir():
                fsync_path(partition)
        entry["writer"] = staged.path.name
        move(_write_entry(staged.path, entry), wh.progress_file(rid))
    staged.parts, staged.set_parts = list(entry["parts"]), list(entry["slice_set_parts"])
    staged.chunked = True
    return entry


def check_owner(staged) -> None:
    """Under the commit lock: the id is not committed, and its progress entry is this writer's (or,
    before its first chunk, there is none)."""
    wh, rid = staged.warehouse, staged.run_id
    check_free(wh, rid)
    if staged.chunked:
        entry = read_quiet(wh, rid)
        if entry is None or entry["writer"] != staged.path.name:
            raise UsageError("run %r was taken over by another writer in warehouse %s; this one stops"
                             % (rid, wh.root))
    elif os.path.lexists(wh.progress_file(rid)):
        raise taken(rid, wh.root, INCOMPLETE % rid)


def stray_parts(partition: Path, listed: List[str]) -> List[Path]:
    """Part files (or their .tmp) in an incomplete run's partition that its progress entry does not list."""
    try:
        names = sorted(os.listdir(partition))
    except OSError:
        return []
    return [partition / n for n in names if _PART_ORTMP.match(n) and n not in listed
            and (partition / n).is_file() and not (partition / n).is_symlink()]



# ---------------------------------------------------------------------------- helpers
def _write_entry(staging: Path, entry: Dict[str, Any]) -> Path:
    """The entry as `progress.json.tmp` in the writer's staging area, fsynced; returns its path."""
    tmp = staging / (PROGRESS_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(entry, handle, sort_keys=True, ensure_ascii=False, default=str)
    fsync_path(tmp)
    return tmp


def _fsync_new(staged, case_name: Optional[str], set_name: Optional[str]) -> None:
    """The chunk's files and the staging directories holding them reach the disk before any rename."""
    for directory, name in ((staged.cases_path, case_name), (staged.sets_path, set_name)):
        if name:
            fsync_path(directory / name)
            fsync_path(directory)


def is_sharded(entry: Optional[Dict[str, Any]]) -> bool:
    """Whether a progress entry (run_progress.read) is a sharded run's merged entry."""
    return isinstance(entry, dict) and isinstance(entry.get("shards"), dict)


def missing(entry: Dict[str, Any]) -> List[int]:
    """The shards of a sharded progress entry that are not complete yet."""
    shards = entry["shards"]
    done = set(shards.get("complete") or [])
    return [i for i in range(1, int(shards.get("count") or 0) + 1) if i not in done]
