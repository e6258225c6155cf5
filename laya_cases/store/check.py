"""Is a committed run intact? A cheap footer check for every reader, a full one for `laya-cases check`.

Readers (Warehouse.connect / require_run) read only Parquet footers, through DuckDB (pyarrow is not
imported on that path: `laya-cases runs` starts in the time of `import duckdb`; duckdb itself loads on the
first read, so that `import laya_cases` and `lc.open` load no engine), cached per (path,
mtime, size) within the process, so a damaged run is left out and named instead of failing every
query. `check` also decodes every page and compares row counts with the runs table: a run's case files
hold n_cases + n_errors records plus one record per dataset row without questions (at most n_rows).
An incomplete run (store/progress.py) is checked alike: its progress entry must read, and the files it
lists must hold the counts its run row gives so far.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from laya_cases.store import progress as run_progress
from laya_cases.store.layout import sql_list
from laya_cases.store.schema import REQUIRED_COLUMNS, RUN_COLUMNS, SLICE_SET_COLUMNS

if TYPE_CHECKING:
    import duckdb


_RUN_NAMES = [name for name, _, _ in RUN_COLUMNS]
#: (path, mtime_ns, size) -> (rows, every name in the file's schema tree, nested ones included)
_FOOTERS: Dict[Tuple[str, int, int], Tuple[int, frozenset]] = {}
_PRIVATE: List[duckdb.DuckDBPyConnection] = []     # an in-memory database for callers without a connection
_LOCK = threading.Lock()


class Damage(Exception):
    """One problem of one file: str() is `<path>: <what is wrong>`."""


def _cursor(con: Optional[duckdb.DuckDBPyConnection]) -> duckdb.DuckDBPyConnection:
    """A cursor that reads footers: of the caller's connection (it creates nothing in it) or of a private
    database opened once per process (opening one costs ~20-50 ms)."""
    import duckdb

    with _LOCK:
        if con is None:
            if not _PRIVATE:
                _PRIVATE.append(duckdb.connect())
            con = _PRIVATE[0]
        return con.cursor()


def _key(path) -> Tuple[str, int, int]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Damage("%s: missing" % path) from None
    except OSError as exc:
        raise Damage("%s: %s" % (path, exc.strerror or exc)) from None
    return (str(path), st.st_mtime_ns, st.st_size)


def _read_footers(cur: duckdb.DuckDBPyConnection, paths: List[str]) -> Dict[str, Tuple[int, frozenset]]:
    """{file name as DuckDB reports it: (rows, names)} of these files, in two queries; raises duckdb.Error
    when any footer does not read, or UsageError for a path DuckDB cannot take literally."""
    files = sql_list(paths)
    rows = dict(cur.execute("SELECT file_name, num_rows FROM parquet_file_metadata(%s)" % files).fetchall())
    names: Dict[str, set] = {}
    for name, column in cur.execute("SELECT file_name, name FROM parquet_schema(%s)" % files).fetchall():
        names.setdefault(name, set()).add(column)
    return {name: (int(n), frozenset(names.get(name, ()))) for name, n in rows.items()}


def prefetch(paths: List[Path], con: Optional[duckdb.DuckDBPyConnection] = None) -> None:
    """Read the footers of all these files in one batch into the cache; when one of them does not read,
    nothing is cached here and footer() finds which, file by file."""
    import duckdb

    todo = {}
    for path in paths:
        try:
            key = _key(path)
        except Damage:
            continue
        if key not in _FOOTERS:
            todo[key[0]] = key
    if not todo:
        return
    try:
        found = _read_footers(_cursor(con), list(todo))
    except duckdb.Error:
        return
    if set(found) == set(todo):               # DuckDB names each file as given, else footer() reads it alone
        for name, value in found.items():
            _FOOTERS[todo[name]] = value


def footer(path: Path, required: List[str], con: Optional[duckdb.DuckDBPyConnection] = None) -> int:
    """The file's row count from its Parquet footer, which must name every `required` column; raises Damage."""
    import duckdb

    key = _key(path)
    cached = _FOOTERS.get(key)
    if cached is None:
        try:
            cached = _FOOTERS[key] = next(iter(_read_footers(_cursor(con), [str(path)]).values()))
        except (duckdb.Error, StopIteration) as exc:    # any unreadable footer is damage
            raise Damage("%s: not a readable Parquet file (%s)" % (path, _first_line(exc))) from None
    n_rows, names = cached
    missing = [name for name in required if name not in names]
    if missing:
        raise Damage("%s: lacks column(s) %s" % (path, ", ".join(missing[:5])))
    return n_rows


def run_files(wh, run_id: str) -> List[Path]:
    """Every Parquet file a footer check of the run reads."""
    return ([wh.run_file(run_id)] if wh.has_run(run_id) else []) + list(wh.slice_set_files(run_id)) \
        + list(wh.case_files(run_id))


def run_problem(wh, run_id: str, con: Optional[duckdb.DuckDBPyConnection] = None) -> Optional[str]:
    """The first problem of a committed run's files (footers only), or None when it is readable."""
    return next(iter(_footer_problems(wh, run_id, con)), None)


def _footer_problems(wh, run_id: str, con: Optional[duckdb.DuckDBPyConnection] = None) -> List[str]:
    problems = []
    heads = [(p, SLICE_SET_COLUMNS, None) for p in wh.slice_set_files(run_id)]
    if wh.run_state(run_id) == "incomplete":
        try:
            run_progress.read(wh, run_id)
        except run_progress.ProgressError as exc:
            return [str(exc)]
    else:
        heads.insert(0, (wh.run_file(run_id), _RUN_NAMES, 1))
    for path, names, rows in heads:
        try:
            n_rows = footer(path, names, con)
            if rows is not None and n_rows != rows:
                problems.append("%s: %d rows, expected %d" % (path, n_rows, rows))
        except Damage as exc:
            problems.append(str(exc))
    files = wh.case_files(run_id)
    if not files:
        part = wh.case_partition(run_id)
        problems.append("%s: %s" % (part, "no case file" if part.is_dir() else "missing (the run's cases partition)"))
    for path in files:
        try:
            footer(path, REQUIRED_COLUMNS, con)
        except Damage as exc:
            problems.append(str(exc))
    if not problems and wh.run_state(run_id) == "complete":
        problems.extend(_record_problems(wh, run_id, files, con))
    return problems


#: (run file key, case file keys) -> the count problem of a committed run (None: none), per process
_COUNTS: Dict[Tuple, Optional[str]] = {}


def _record_problems(wh, run_id: str, files: List[Path], con) -> List[str]:
    """The case files' records, counted from their footers (rows, and the null counts of `error` and `qid`
    in the column statistics), against the runs row: errors = n_errors exactly, and the records without an
    error are the n_cases cases plus at most n_rows empty rows, each with a null qid. A same-schema file
    that is not the run's (a copy of some of its rows) breaks one of these, so every reader leaves the run
    out, naming its files, as `check` would after decoding every page."""
    try:
        key = (_key(wh.run_file(run_id)),) + tuple(_key(path) for path in files)
    except Damage as exc:
        return [str(exc)]
    if key not in _COUNTS:
        _COUNTS[key] = _count_from_footers(wh, run_id, files, _cursor(con))
    return [_COUNTS[key]] if _COUNTS[key] else []


def _count_from_footers(wh, run_id: str, files: List[Path], cur) -> Optional[str]:
    import duckdb

    try:
        found = cur.execute("SELECT run_id, n_cases, n_errors, n_rows FROM read_parquet(%s, hive_partitioning = false)"
                            % sql_list([str(wh.run_file(run_id))])).fetchone()
        nulls = _null_counts(cur, files)
    except (duckdb.Error, TypeError) as exc:
        return "%s: unreadable (%s)" % (wh.run_entry(run_id), _first_line(exc))
    if found[0] != run_id:             # another run's runs file copied here
        return "%s: run_id is %r, not the directory's %r" % (wh.run_file(run_id), found[0], run_id)
    return _verdict(wh, run_id, files, found[1:], nulls)


def _null_counts(cur, files: List[Path]) -> Dict[str, Dict[str, Optional[int]]]:
    """{file: {"error": nulls, "qid": nulls, "variant": nulls, "rows": (min, max) row_index}} from the
    footers' column statistics (None: not recorded)."""
    out: Dict[str, Dict[str, Optional[int]]] = {}
    for name, column, nulls, low, high in cur.execute(
            "SELECT file_name, path_in_schema, CASE WHEN bool_or(stats_null_count IS NULL) THEN NULL "
            "ELSE sum(stats_null_count) END, min(TRY_CAST(stats_min AS BIGINT)), max(TRY_CAST(stats_max AS BIGINT)) "
            "FROM parquet_metadata(%s) WHERE path_in_schema IN ('error', 'qid', 'row_index', 'variant') "
            "GROUP BY ALL" % sql_list([str(p) for p in files])).fetchall():
        if column == "row_index":
            out.setdefault(name, {})["rows"] = None if low is None or high is None else (int(low), int(high))
        else:
            out.setdefault(name, {})[column] = None if nulls is None else int(nulls)
    return out


def _rows_overlap(per_file, n_rows) -> bool:
    """Whether the files' dataset-row ranges (row_index min..max) overlap or pass the run's rows: each
    commit writes the records of its own rows, so one file's range never meets another's."""
    ranges = sorted(f["rows"] for f in per_file if f.get("rows") is not None)
    if not ranges or n_rows is None:
        return False
    return ranges[-1][1] >= max(n_rows, 1) or any(b[0] <= a[1] for a, b in zip(ranges, ranges[1:]))


def _verdict(wh, run_id: str, files: List[Path], counts, nulls) -> Optional[str]:
    n_cases, n_errors, n_rows = counts
    sizes = [_FOOTERS[_key(path)][0] for path in files]
    total = sum(sizes)
    per_file = [nulls.get(str(path), {}) for path in files]
    if n_cases is None or n_errors is None or any(f.get(c) is None for f in per_file for c in ("error", "qid")):
        return None                                  # a writer without null counts: only `check` can tell
    no_error, no_qid = sum(f["error"] for f in per_file), sum(f["qid"] for f in per_file)
    empty = no_error - n_cases                        # records without an error that are not cases
    passes = any(f.get("variant") is not None and f["variant"] < n for f, n in zip(per_file, sizes))
    if total - no_error == n_errors and 0 <= empty <= min(n_rows or 0, no_qid) and no_qid <= empty + n_errors \
            and (passes or not _rows_overlap(per_file, n_rows)):     # robustness's passes revisit the rows
        return None
    names = ", ".join(p.name for p in files[:6]) + (" and %d more" % (len(files) - 6) if len(files) > 6 else "")
    return ("%s: its files (%s) hold %d record(s), %d with an error, the runs table says %s case(s) and %s error(s) "
            "over %s row(s): a file that is not the run's? (`laya-cases check` decodes every page)"
            % (wh.case_partition(run_id), names, total, total - no_error, n_cases, n_errors, n_rows))


def prefetch_counts(wh, run_ids: List[str], con: Optional[duckdb.DuckDBPyConnection] = None) -> None:
    """_record_problems for many committed runs in two queries (the runs rows, the case files' null
    counts), so that `runs` over a thousand runs does not ask DuckDB two thousand times. Any failure
    leaves the cache as it was: each run is then checked alone."""
    import duckdb

    todo = {}
    for rid in run_ids:
        if wh.run_state(rid) != "complete":
            continue
        files = wh.case_files(rid)
        try:
            key = (_key(wh.run_file(rid)),) + tuple(_key(path) for path in files)
            if not all(_key(p) in _FOOTERS for p in files):
                continue
        except Damage:
            continue
        if files and key not in _COUNTS:
            todo[rid] = (key, files)
    if not todo:
        return
    cur = _cursor(con)
    try:
        by_file = {r[0]: r[1:] for r in cur.execute(
            "SELECT filename, run_id, n_cases, n_errors, n_rows FROM read_parquet(%s, union_by_name = true, "
            "filename = true, hive_partitioning = false)" % sql_list([str(wh.run_file(rid)) for rid in todo])).fetchall()}
        nulls = _null_counts(cur, [p for _, files in todo.values() for p in files])
    except (duckdb.Error, TypeError):
        return
    for rid, (key, files) in todo.items():
        row = by_file.get(str(wh.run_file(rid)))
        if row is not None and row[0] == rid:          # else checked alone, and named
            _COUNTS[key] = _verdict(wh, rid, files, row[1:], nulls)


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
    import pyarrow.parquet as pq

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
