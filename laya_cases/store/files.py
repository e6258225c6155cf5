"""Files under a warehouse root as every writer writes them: complete before named (tmp + rename),
fsynced before a rename makes them visible, and the commit lock every commit takes."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from laya_cases.core.errors import UsageError
from laya_cases.store.layout import Layout
from laya_cases.store.locks import lock, unlock
from laya_cases.store.schema import float_columns

TMP = ".tmp"


@contextmanager
def commit_lock(wh: Layout) -> Iterator[None]:
    path = wh.root / ".commit.lock"
    try:
        handle = open(path, "a+")
    except OSError as exc:
        raise UsageError("cannot take the warehouse's commit lock %s: %s (it must be a file laya-cases "
                         "may write)" % (path, exc.strerror or exc)) from None
    with handle:
        lock(handle.fileno())
        try:
            yield
        finally:
            unlock(handle.fileno())


#: Columns with a value per case (ids, positions, texts): dictionary encoding only costs there.
PER_CASE = frozenset({"case_id", "parent_case_id", "item_id", "source_item_id", "row_index", "line_no", "call_id", "answer_json",
                      "raw_text", "state_json"})


def parquet_options(schema) -> dict:
    """No min/max statistics on floating-point columns. Parquet statistics leave NaN out (the format's
    rule), and DuckDB (2.0, duckdb/duckdb#25521) folds `x <= 1`, `isnan(x)` and ORDER BY keys against
    them, so a NaN confidence would silently vanish from, or enter, a user's query. Integer, string and
    bool columns keep theirs (row-group pruning by run, qid, language). Dictionary encoding only for
    the columns of few distinct values: on floats and per-case columns Arrow builds a dictionary and
    falls back to plain pages, which took a fifth of ingest's Parquet time and made the files larger."""
    floats = float_columns(schema)
    return {"compression": "zstd", "write_statistics": [n for n in schema.names if n not in floats],
            "use_dictionary": [n for n in schema.names if n not in floats and n not in PER_CASE]}


def write_table(table, path: Path) -> None:
    """Write a whole Parquet file (a pyarrow Table) under a temporary name, then give it its name: never
    seen torn."""
    import pyarrow.parquet as pq       # not at the top: readers of the store (`runs`) never load pyarrow

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, str(path) + TMP, **parquet_options(table.schema))
    os.rename(str(path) + TMP, path)


def fsync_path(path: Path) -> None:
    if os.name == "nt" and os.path.isdir(path):      # Windows cannot open a directory; NTFS orders renames
        return
    fd = os.open(str(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_dir(path: Path) -> None:
    """mkdir -p, fsyncing each parent that gained a directory."""
    if path.is_dir():
        return
    ensure_dir(path.parent)
    try:
        os.mkdir(path)
    except FileExistsError:
        return
    fsync_path(path.parent)


def move(source: Path, target: Path) -> None:
    """Rename a complete file into place (replacing one of the same name) and fsync its directory."""
    ensure_dir(target.parent)
    os.replace(source, target)
    fsync_path(target.parent)
