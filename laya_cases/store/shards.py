"""The store side of a sharded run (`laya-cases run DATASET --shard I/N --run-id ID`; shard.py runs it).

Each shard is a writer of its own contiguous share of the dataset rows of one run id. Everything
it writes goes through the warehouse's commit lock (store_write.commit_lock), so N processes on N
hosts sharing one warehouse directory need no coordinator:

    _progress/run_id=<id>/shards.json              the run's identity, written by the first shard to claim
    _progress/run_id=<id>/shard-<I>-of-<N>.json    shard I's commit record (its parts, rows, run row)
    _progress/run_id=<id>/slice_sets.json          the run's slice sets, one id per combination, shared
    _progress/run_id=<id>/progress.json            the merged progress entry (store/progress.py) readers use
    cases/run_id=<id>/part-s<I>-<k>.parquet        shard I's k-th committed part (names sort by row)
    slice_sets/run_id=<id>/part-00000.parquet      the slice sets, rewritten from slice_sets.json

A shard commit moves its part in, rewrites progress.json (every shard's committed parts, merged run
row) and then its own record, all under the lock. The shard that finds all N records complete writes
the run's runs entry (the commit point, as for any run) and removes `_progress/run_id=<id>/`.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core.identity import first_difference
from laya_cases.store import progress as RP
from laya_cases.store.files import commit_lock, ensure_dir, fsync_path, move, write_table
from laya_cases.store.layout import PARTITION, RUN_FILE, is_run_id
from laya_cases.store.leftovers import sweep_staging, writer_alive
from laya_cases.store import schema
from laya_cases.store.schema import SLICE_SET_COLUMNS


MANIFEST = "shards.json"
REGISTRY = "slice_sets.json"
MANIFEST_FORMAT = "laya-cases-shards/1"
RECORD_FORMAT = "laya-cases-shard/1"
_RECORD = re.compile(r"^shard-(\d{4,})-of-(\d{4,})\.json$")
MAX_SHARDS = 9999


def record_name(index: int, count: int) -> str:
    return "shard-%04d-of-%04d.json" % (index, count)


def part_name(index: int, k: int) -> str:
    """Shard `index`'s k-th part file: `part-s0002-00000.parquet` (sorts by shard, then by chunk)."""
    return "part-s%04d-%05d.parquet" % (index, k)


def label(index: int, count: int) -> str:
    return "shard %d/%d" % (index, count)


# ---------------------------------------------------------------------------- small files
def _read_json(path: Path) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError("%s: not readable (%s)" % (path, shorten(str(exc)))) from None
    return value if isinstance(value, dict) else None


def _write_json(path: Path, value: Any) -> None:
    """Replace `path` whole (written as .tmp, fsynced, renamed; call under the commit lock)."""
    ensure_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle, sort_keys=True, ensure_ascii=False, default=str)
    fsync_path(tmp)
    move(tmp, path)


def manifest(wh, run_id: str) -> Optional[Dict[str, Any]]:
    return _read_json(wh.progress_entry(run_id) / MANIFEST)


def records(wh, run_id: str) -> Dict[int, Dict[str, Any]]:
    """{shard index: its record} of the run's shards that have one."""
    out: Dict[int, Dict[str, Any]] = {}
    try:
        names = sorted(os.listdir(wh.progress_entry(run_id)))
    except OSError:
        return out
    for name in names:
        match = _RECORD.match(name)
        record = _read_json(wh.progress_entry(run_id) / name) if match else None
        if record is not None and record.get("format") == RECORD_FORMAT:
            out[int(match.group(1))] = record
    return out



def live_writers(wh, entry_dir: Path) -> bool:
    """Whether a shard of this `_progress/run_id=<id>/` is being written by a live process (gc keeps it)."""
    try:
        names = os.listdir(entry_dir)
    except OSError:
        return False
    for name in names:
        if _RECORD.match(name):
            try:
                record = json.loads((entry_dir / name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and not record.get("complete") and \
                    writer_alive(wh, str(record.get("writer") or "")):
                return True
    return False


# ---------------------------------------------------------------------------- claiming
def refuse(wh, run_id: str, index: int, count: int, key: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Raise UsageError when shard I/N cannot join run `run_id` (complete, not sharded, another
    identity, already committed, being written); returns the shard's record when it resumes one."""
    where = "cannot run %s of run %r" % (label(index, count), run_id)
    if wh.has_run(run_id):
        raise UsageError("%s: the run is complete in warehouse %s" % (where, wh.root))
    try:
        entry = RP.read(wh, run_id)
    except RP.ProgressError as exc:
        raise UsageError("%s: %s" % (where, exc)) from None
    if entry is not None and not RP.is_sharded(entry):
        raise UsageError("%s: run id %r is an incomplete run that is not sharded (`laya-cases run ... --resume %s` "
                         "continues it)" % (where, run_id, run_id))
    known = manifest(wh, run_id)
    if known is not None:
        if known.get("count") != count:
            raise UsageError("%s: the run is split into %s shards, not %d" % (where, known.get("count"), count))
        stored = known.get("identity") or {}
        if "settings" not in key:
            stored = {k: v for k, v in stored.items() if k != "settings"}
        found = first_difference(stored, key)
        if found:
            raise UsageError("%s: %s differs (recorded %s, now %s); every shard needs the same dataset, model and "
                             "options" % (where, found[0], shorten(repr(found[1])), shorten(repr(found[2]))))
    record = records(wh, run_id).get(index)
    if record is not None and record.get("complete"):
        raise UsageError("%s: that shard is already committed in warehouse %s" % (where, wh.root))
    if record is not None and writer_alive(wh, str(record.get("writer") or "")):
        raise UsageError("%s: another process is writing that shard (%s)" % (where, wh.staging_dir / record["writer"]))
    return record


def claim(staged, index: int, count: int, rows: Tuple[int, int], key: Dict[str, Any]) -> Dict[str, Any]:
    """Under the commit lock: check the shard may join (refuse), write the run's identity when this is
    the first shard, and take the shard's record (a new one, or a dead writer's, whose unlisted parts
    go). Returns the record."""
    wh, rid = staged.warehouse, staged.run_id
    with commit_lock(wh):
        record = refuse(wh, rid, index, count, key)
        entry_dir = wh.progress_entry(rid)
        if manifest(wh, rid) is None:
            _write_json(entry_dir / MANIFEST, {"format": MANIFEST_FORMAT, "run_id": rid, "count": count,
                                               "identity": key})
        if record is None:
            record = {"format": RECORD_FORMAT, "run_id": rid, "shard": index, "count": count, "rows": list(rows),
                      "rows_committed": 0, "parts": [], "run": None, "complete": False}
        prefix = part_name(index, 0)[:len("part-s0000-")]
        strays = [p for p in RP.stray_parts(wh.case_partition(rid), record["parts"]) if p.name.startswith(prefix)]
        for path in strays:
            os.unlink(path)
        if strays:
            fsync_path(wh.case_partition(rid))
        record["writer"] = staged.path.name
        _publish(wh, rid, {**records(wh, rid), index: record}, count)
        _write_json(entry_dir / record_name(index, count), record)
    staged.parts = list(record["parts"])
    staged.chunked = True
    return record


# ---------------------------------------------------------------------------- committing
def commit(staged, index: int, count: int, run_row: Dict[str, Any], rows_committed: int,
           final: bool) -> List[int]:
    """Commit what the shard wrote since its last commit (and, with `final`, the shard itself); the
    shard that completes the run writes its runs entry. Returns the shards still missing."""
    wh, rid = staged.warehouse, staged.run_id
    case_name = staged.close()
    target = part_name(index, len(staged.parts)) if case_name else None
    if case_name:
        fsync_path(staged.cases_path / case_name)
        fsync_path(staged.cases_path)
    with commit_lock(wh):
        record = records(wh, rid).get(index)
        if wh.has_run(rid) or record is None or record.get("writer") != staged.path.name:
            raise UsageError("%s of run %r was taken over by another writer in warehouse %s; this one stops"
                             % (label(index, count), rid, wh.root))
        sweep_staging(wh, keep=staged.path)
        if target:
            move(staged.cases_path / case_name, wh.case_partition(rid) / target)
        record = dict(record, parts=record["parts"] + ([target] if target else []), rows_committed=rows_committed,
                      run=dict(run_row, run_id=rid), complete=final)
        every = {**records(wh, rid), index: record}
        left = [i for i in range(1, count + 1) if not (every.get(i) or {}).get("complete")]
        if left:
            _publish(wh, rid, every, count)          # progress.json first: a part it lists is never swept
            _write_json(wh.progress_entry(rid) / record_name(index, count), record)
        else:
            _finish(staged, every, count)
    if target:
        staged.parts.append(target)
    staged._sets = []                                  # noqa: SLF001 -- shards keep slice sets in the registry
    return left


def _publish(wh, rid: str, every: Dict[int, Dict[str, Any]], count: int) -> None:
    """The merged progress entry and the slice sets file (when some shard has committed a part)."""
    parts = [p for i in sorted(every) for p in every[i]["parts"]]
    runs = [every[i] for i in sorted(every) if every[i].get("run")]
    if not parts or not runs:
        return
    write_slice_sets(wh, rid)
    known = manifest(wh, rid) or {}
    entry = {"format": RP.FORMAT, "run_id": rid, "writer": "shards", "parts": parts,
             "rows_committed": sum(int(r.get("rows_committed") or 0) for r in every.values()),
             "slice_set_parts": [RP.part_name(0)], "run": merged_run(every, count), "resume": known.get("identity") or {},
             "shards": {"count": count, "complete": sorted(i for i, r in every.items() if r.get("complete"))}}
    _write_json(wh.progress_file(rid), entry)


def _finish(staged, every: Dict[int, Dict[str, Any]], count: int) -> None:
    """Under the lock, every shard complete: the slice sets, the runs entry (the commit point), then
    the progress directory goes."""
    import pyarrow as pa


    wh, rid = staged.warehouse, staged.run_id
    if not any(r["parts"] for r in every.values()):     # no decision at all: a file with the schema
        write_table(schema.DECISION_SCHEMA.empty_table(), wh.case_partition(rid) / RP.part_name(0))
    write_slice_sets(wh, rid)
    row = dict(merged_run(every, count), run_id=rid,
               created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    runs_path = staged.path / "runs" / (PARTITION + rid)
    write_table(pa.Table.from_pylist([row], schema=schema.RUN_SCHEMA), runs_path / RUN_FILE)
    fsync_path(runs_path / RUN_FILE)
    fsync_path(runs_path)
    target = wh.run_entry(rid)
    ensure_dir(target.parent)
    if target.exists():
        shutil.rmtree(target)
    os.rename(runs_path, target)                      # the run's commit point
    fsync_path(target.parent)
    shutil.rmtree(wh.progress_entry(rid), ignore_errors=True)
    fsync_path(wh.progress_dir)
    staged.committed = True


# ---------------------------------------------------------------------------- slice sets, one id per combination
def combo_key(values: List[Any]) -> tuple:
    """(language_key, model_key, qid, tags, answer_type, correct) as DecisionBuffer keys it."""
    return (values[0], values[1], values[2], tuple(values[3] or ()), values[4], values[5])


def slice_set_id(wh, rid: str, combo: tuple) -> Tuple[int, List[List[Any]]]:
    """The run-wide id of a slice-set combination (a new one is appended under the commit lock);
    returns it with every combination known so far (position = id)."""
    path = wh.progress_entry(rid) / REGISTRY
    with commit_lock(wh):
        known = (_read_json(path) or {}).get("sets") or []
        keys = [combo_key(v) for v in known]
        if combo in keys:
            return keys.index(combo), known
        known.append([combo[0], combo[1], combo[2], list(combo[3]), combo[4], combo[5]])
        _write_json(path, {"run_id": rid, "sets": known})
    return len(known) - 1, known


def registry(wh, rid: str) -> Dict[tuple, int]:
    known = (_read_json(wh.progress_entry(rid) / REGISTRY) or {}).get("sets") or []
    return {combo_key(v): i for i, v in enumerate(known)}


def write_slice_sets(wh, rid: str) -> None:
    """slice_sets/run_id=<id>/part-00000.parquet from the registry (under the commit lock)."""
    import pyarrow as pa


    known = (_read_json(wh.progress_entry(rid) / REGISTRY) or {}).get("sets") or []
    rows = [dict(zip(SLICE_SET_COLUMNS, [i] + list(v))) for i, v in enumerate(known)]
    path = wh.slice_set_partition(rid) / RP.part_name(0)
    ensure_dir(path.parent)
    write_table(pa.Table.from_pylist(rows, schema=schema.SLICE_SET_SCHEMA), path)
    fsync_path(path)
    fsync_path(path.parent)


# ---------------------------------------------------------------------------- the merged run row
def merged_run(every: Dict[int, Dict[str, Any]], count: int) -> Dict[str, Any]:
    """One runs row from the shards' rows: counts summed, the timing block summed, `errored` joined in
    row order; settings.shards says which rows each shard scored, on which device."""
    order = [i for i in sorted(every) if every[i].get("run")]
    rows = [every[i]["run"] for i in order]
    row = dict(rows[0])
    row["n_cases"] = sum(int(r["n_cases"]) for r in rows)
    row["n_errors"] = sum(int(r["n_errors"]) for r in rows)
    configs = [json.loads(r.get("config_json") or "{}") for r in rows]
    settings = [json.loads(r.get("settings_json") or "{}") for r in rows]
    row["config_json"] = json.dumps(_merge_config(configs), sort_keys=True, ensure_ascii=False)
    merged = dict(settings[0], device=_common([s.get("device") for s in settings]))
    merged["shards"] = {"count": count, "shards": [
        {"shard": i, "rows": every[i]["rows"], "rows_committed": every[i]["rows_committed"],
         "complete": bool(every[i].get("complete")), "device": s.get("device")} for i, s in zip(order, settings)]}
    row["settings_json"] = json.dumps(merged, sort_keys=True, ensure_ascii=False, default=str)
    return row


def _merge_config(configs: List[Dict[str, Any]]) -> Dict[str, Any]:
    config = dict(configs[0])
    config["device"] = _common([c.get("device") for c in configs])
    timings = [c.get("timing") or {} for c in configs]
    timing = dict(timings[0])
    for key in ("chunks", "rows_grouped", "rows_alone"):
        timing[key] = sum(int(t.get(key) or 0) for t in timings)
    timing["max_chunk"] = max(int(t.get("max_chunk") or 0) for t in timings)
    for key in ("min_confidence_sent", "sort_by_length_sent"):
        timing[key] = any(bool(t.get(key)) for t in timings)
    config["timing"] = timing
    errored = [e for c in configs for e in (c.get("errored") or [])]
    config.pop("errored", None)
    if errored:
        config["errored"] = errored
    return config


def _common(values: List[Any]) -> Any:
    """The one value all shards share, else their distinct values in shard order."""
    distinct = []
    for value in values:
        if value not in distinct:
            distinct.append(value)
    return distinct[0] if len(distinct) == 1 else distinct


def debris(wh) -> List[Path]:
    """What gc removes besides staging areas and orphan partitions: stray parts of incomplete runs, and
    progress entries of runs that are committed (a writer killed just after its final commit point) or
    without their progress.json (one killed before its first chunk's commit point)."""
    found: List[Path] = []
    for rid in RP.incomplete_ids(wh):
        entry = RP.read_quiet(wh, rid)
        if entry is not None:
            found += RP.stray_parts(wh.case_partition(rid), entry["parts"])
            found += RP.stray_parts(wh.slice_set_partition(rid), entry["slice_set_parts"])
    try:
        names = sorted(os.listdir(wh.progress_dir))
    except OSError:
        names = []
    for name in names:
        rid = name[len(PARTITION):]
        path = wh.progress_dir / name
        if name.startswith(PARTITION) and is_run_id(rid) and path.is_dir() and not path.is_symlink() \
                and (wh.has_run(rid) or not os.path.lexists(wh.progress_file(rid))) \
                and (wh.has_run(rid) or not live_writers(wh, path)):      # shards before their first commit
            found.append(path)
    return found
