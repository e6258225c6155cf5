"""Relabels: accepted corrections of gold labels (`laya-cases relabel`), kept beside the runs, never in one.

A committed run's files are never rewritten: a relabel is a row of <root>/relabels/relabels.parquet, keyed
by the dataset's labelled rows (labelled_rows_sha256) and the case id, so it applies to every run of that
dataset, now and later, when a reader asks for it (`report`, `run`, `stability` and `audit` with
`--relabels`) and to none otherwise. The file is replaced whole under the commit lock (tmp + rename, fsynced): a reader sees the old
list or the new one. The latest relabel of a case (highest seq) is the one that counts.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Dict, List

from laya_cases.store.files import commit_lock, ensure_dir, fsync_path, write_table
from laya_cases.store.kind import require

#: (name, Arrow type): the file's columns, in order.
COLUMNS = [("seq", "int64"), ("labelled_rows_sha256", "string"), ("questions_sha256", "string"),
           ("case_id", "string"), ("row_index", "int64"), ("line_no", "int64"), ("qid", "string"),
           ("from_json", "string"), ("to_json", "string"), ("note", "string"), ("source_run", "string"),
           ("created_at", "string")]


def schema():
    import pyarrow as pa

    return pa.schema([(name, pa.int64() if kind == "int64" else pa.string()) for name, kind in COLUMNS])


def path(wh) -> Path:
    return wh.relabels_file


def read(wh) -> List[Dict[str, Any]]:
    """Every relabel, in seq order ([] when none was made)."""
    import pyarrow.parquet as pq

    file = path(wh)
    if not file.is_file():
        return []
    return sorted(pq.read_table(str(file)).to_pylist(), key=lambda r: r["seq"])


def add(wh, rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Append relabels (dicts with the COLUMNS but seq and created_at) atomically; returns them numbered."""
    import pyarrow as pa

    require(str(wh.root), "local")
    file = path(wh)
    ensure_dir(file.parent)
    with commit_lock(wh):
        old = read(wh)
        start = max((r["seq"] for r in old), default=0) + 1
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        new = [dict(r, seq=start + i, created_at=now) for i, r in enumerate(rows)]
        write_table(pa.Table.from_pylist(old + new, schema=schema()), file)
        fsync_path(file.parent)
    return new
