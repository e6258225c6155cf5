"""Is a committed run intact? A cheap footer check for every reader, a full one for `laya-cases check`.

Readers (Warehouse.connect / require_run) read only Parquet footers, cached per (path, mtime, size)
within the process, so a damaged run is left out and named instead of failing every query. `check`
also decodes every page and compares row counts with the runs table: a run's case files hold
n_cases + n_errors records plus one record per dataset row without questions (at most n_rows).
An incomplete run (run_progress.py) is checked alike: its progress entry must read, and the files it
lists must hold the counts its run row gives so far.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pyarrow.parquet as pq

from . import run_progress
from .schema import REQUIRED_COLUMNS, RUN_SCHEMA, SLICE_SET_SCHEMA

_FOOTERS: Dict[Tuple[str, int, int], Tuple[pq.FileMetaData, frozenset]] = {}


class Damage(Exception):
    """One problem of one file: str() is `<path>: <what is wrong>`."""


def footer(path: Path, required: List[str]) -> pq.FileMetaData:
    """The file's Parquet footer, which must name every `required` column; raises Damage."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Damage("%s: missing" % path) from None
    except OSError as exc:
        raise Damage("%s: %s" % (path, exc.strerror or exc)) from None
    key = (str(path), st.st_mtime_ns, st.st_size)
    cached = _FOOTERS.get(key)
    if cached is None:
        try:
            meta = pq.read_metadata(str(path))
            cached = _FOOTERS[key] = (meta, frozenset(meta.schema.to_arrow_schema().names))
        except Exception as exc:                # noqa: BLE001 -- any unreadable footer is damage
            raise Damage("%s: not a readable Parquet file (%s)" % (path, _first_line(exc))) from None
    meta, names = cached
    missing = [name for name in required if name not in names]
    if missing:
        raise Damage("%s: lacks column(s) %s" % (path, ", ".join(missing[:5])))
    return meta


def run_problem(wh, run_id: str) -> Optional[str]:
    """The first problem of a committed run's files (footers only), or None when it is readable."""
    return next(iter(_footer_problems(wh, run_id)), None)


def _footer_problems(wh, run_id: str) -> List[str]:
    problems = []
    heads = [(p, SLICE_SET_SCHEMA, None) for p in wh.slice_set_files(run_id)]
    if wh.run_state(run_id) == "incomplete":
        try:
            run_progress.read(wh, run_id)
        except run_progress.ProgressError as exc:
            return [str(exc)]
    else:
        heads.insert(0, (wh.run_file(run_id), RUN_SCHEMA, 1))
    for path, schema, rows in heads:
        try:
            meta = footer(path, schema.names)
            if rows is not None and meta.num_rows != rows:
                problems.append("%s: %d rows, expected %d" % (path, meta.num_rows, rows))
        except Damage as exc:
            problems.append(str(exc))
    files = wh.case_files(run_id)
    if not files:
        part = wh.case_partition(run_id)
        problems.append("%s: %s" % (part, "no case file" if part.is_dir() else "missing (the run's cases partition)"))
    for path in files:
        try:
            footer(path, REQUIRED_COLUMNS)
        except Damage as exc:
            problems.append(str(exc))
    return problems


def check(wh) -> List[str]:
    """Every problem of every committed run (and of runs entries without run.parquet) and of every
    incomplete run, one line each."""
    problems: List[str] = []
    try:
        entries = sorted(n for n in os.listdir(wh.runs_dir) if n.startswith("run_id="))
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for name in entries:
        run_id = name[len("run_id="):]
        if not wh.has_run(run_id):
            problems.append("%s: missing (a runs entry without its run.parquet)" % wh.run_file(run_id))
            continue
        found = _footer_problems(wh, run_id)
        problems.extend(found or _count_problems(wh, run_id))
    for run_id in wh.incomplete_ids():
        found = _footer_problems(wh, run_id)
        problems.extend(found or _count_problems(wh, run_id))
    return problems


def _count_problems(wh, run_id: str) -> List[str]:
    """Decode every page of the run's files; compare the records with the runs row's counts."""
    import pyarrow.compute as pc                # slow to import (~0.1 s): only `check` needs it

    entry = wh.run_entry(run_id)
    try:
        progress = run_progress.read_quiet(wh, run_id) if not wh.has_run(run_id) else None
        run = progress["run"] if progress else pq.read_table(str(wh.run_file(run_id))).to_pylist()[0]
        for path in wh.slice_set_files(run_id):
            pq.read_table(str(path))
    except Exception as exc:                    # noqa: BLE001
        return ["%s: unreadable (%s)" % (entry, _first_line(exc))]
    if run.get("run_id") != run_id:
        return ["%s: run_id is %r, not the directory's %r" % (wh.run_file(run_id), run.get("run_id"), run_id)]
    n_cases = n_errors = n_empty = 0
    for path in wh.case_files(run_id):
        try:
            for batch in pq.ParquetFile(str(path)).iter_batches(batch_size=1 << 16):
                error_null = pc.is_null(batch.column("error"))
                qid_null = pc.is_null(batch.column("qid"))
                n_errors += batch.num_rows - (pc.sum(error_null).as_py() or 0)
                n_empty += pc.sum(pc.and_(error_null, qid_null)).as_py() or 0
                n_cases += pc.sum(pc.and_(error_null, pc.invert(qid_null))).as_py() or 0
        except Exception as exc:                # noqa: BLE001 -- a corrupt page anywhere is damage
            return ["%s: unreadable data (%s)" % (path, _first_line(exc))]
    out = []
    part = wh.case_partition(run_id)
    if (n_cases, n_errors) != (run.get("n_cases"), run.get("n_errors")):
        out.append("%s: %d case(s) and %d error record(s), the runs table says %s and %s"
                   % (part, n_cases, n_errors, run.get("n_cases"), run.get("n_errors")))
    elif n_empty > (run.get("n_rows") or 0):
        out.append("%s: %d record(s) without a question, more than the run's %s dataset rows"
                   % (part, n_empty, run.get("n_rows")))
    return out


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]
