"""One directory holds one kind of store: a local warehouse (runs/run_id=*/run.parquet, written through
_staging under .commit.lock) or Delta Lake tables (<table>/_delta_log). Each side refuses a directory the
other kind has written, so `gc` of one kind never takes the other's data for orphans, and a reader says
which `-w` to use instead of reading half a store."""
from __future__ import annotations

import os
from typing import Optional

from laya_cases.core.errors import UsageError

TABLES = ("cases", "slice_sets", "runs")


def delta_marked(root: str) -> bool:
    return any(os.path.isdir(os.path.join(root, t, "_delta_log")) for t in TABLES)


def kinds(root: str) -> set:
    """The store kinds whose files are in the directory `root` ({"local", "delta"}, either, both or none)."""
    found = set()
    if delta_marked(root):
        found.add("delta")
    if os.path.exists(os.path.join(root, ".commit.lock")) or os.path.isdir(os.path.join(root, "_staging")):
        found.add("local")
    else:
        try:
            names = os.listdir(os.path.join(root, "runs"))
        except OSError:
            names = []
        if any(os.path.isfile(os.path.join(root, "runs", n, "run.parquet")) for n in names if n.startswith("run_id=")):
            found.add("local")
    return found


def require(root: str, kind: str, shown: Optional[str] = None) -> None:
    """UsageError unless the directory `root` holds no store of another kind than `kind`."""
    found = kinds(root)
    other = found - {kind}
    if not other:
        return
    where = shown or root
    if found == {"local", "delta"}:
        raise UsageError("%s holds both a local warehouse and Delta tables: move one of them to its own "
                         "directory (each kind reads and cleans only its own files)" % where)
    if kind == "local":
        raise UsageError("%s is a Delta store: use -w delta+file://%s" % (where, os.path.abspath(root)))
    raise UsageError("%s is a local warehouse: use -w %s (a directory holds one kind of store)"
                     % (where, os.path.abspath(root)))
