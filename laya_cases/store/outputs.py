"""Only the store writes under a warehouse root: the one check every output path of every command passes.

An output file or folder (`--json`, `--markdown`, `--html`, `--out`, `--junit`, `--summary`, a plot folder) is
refused, before any model loads or any run is committed, when its resolved path (`~`, `..`, symlinks of
the parts that exist, case folding where the file system folds) is at, under or above a store the command
can see: its local or `delta+file://` warehouse, and ./warehouse. A path that cannot be written at all (a
folder given as a file, a missing or read-only parent, /proc, /sys, /dev) is refused then too, rather than
after the run it would have reported on was committed.
"""
from __future__ import annotations

import os
from typing import Iterable, List, Optional

from laya_cases.core.errors import UsageError, shorten_path as shorten
from laya_cases.store.delta.url import is_url, parse


#: device files a user may name on purpose
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr")
_SYSTEM = ("/proc", "/sys", "/dev")


def store_roots(warehouse: Optional[str]) -> List[str]:
    """The local directories of the stores a command can see: its warehouse (a path or delta+file://;
    an s3:// store has none) and ./warehouse when it exists."""
    roots = []
    text = str(warehouse) if warehouse else os.environ.get("LAYA_CASES_WAREHOUSE") or "warehouse"
    if is_url(text):
        location = parse(text)
        if location.scheme == "file":
            roots.append(location.base[len("file://"):])
    else:
        roots.append(text)
    if os.path.isdir("warehouse"):
        roots.append("warehouse")
    return [_resolved(r) for r in roots]


def _resolved(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.expanduser(path)))


def _related(path: str, root: str, folder: bool = False) -> bool:
    """path at, under or above root (both resolved); a folder written into may hold the store (plot --out .
    writes ./reliability.png beside ./warehouse), so for a folder only at or under counts."""
    sep = os.sep
    inside = path == root or path.startswith(root.rstrip(sep) + sep)
    return inside or (not folder and root.startswith(path.rstrip(sep) + sep))


def refuse_output(value, flag: str, roots: Iterable[str], folder: bool = False) -> None:
    """UsageError naming `flag` and the path unless `value` may be written by the command ('-' is stdout)."""
    text = str(value)
    if text == "-":
        return
    if not text:
        raise UsageError("%s: the path is empty" % flag)
    if "://" in text:
        raise UsageError("%s %s: only local files are written" % (flag, shorten(text)))
    path = _resolved(text)
    shown = shorten(text)
    for root in roots:
        if _related(path, root, folder) or _related(_folded(path), _folded(root), folder):
            raise UsageError("%s %s is in%s the warehouse %s: only run, ingest and import write there"
                             % (flag, shown, "" if folder else ", under or above", root))
    if path in _DEVICES or path.startswith("/dev/fd/"):
        return
    if any(path == top or path.startswith(top + os.sep) for top in _SYSTEM):
        raise UsageError("%s %s: not a place to write to" % (flag, shown))
    if os.path.isdir(path) and not folder:
        raise UsageError("%s %s is a directory; name a file" % (flag, shown))
    if os.path.exists(path) and folder and not os.path.isdir(path):
        raise UsageError("%s %s exists and is not a directory" % (flag, shown))
    parent = os.path.dirname(path) or "."
    if not (folder and os.path.isdir(path)) and not (os.path.isdir(parent) and os.access(parent, os.W_OK)):
        raise UsageError("%s %s: cannot write there (%s is not a writable directory)"
                         % (flag, shown, shorten(os.path.dirname(text) or ".")))


def _folded(path: str) -> str:
    """The path as a case-insensitive file system compares it, when this one is (else as it is)."""
    return path.lower() if _case_insensitive() else path


_INSENSITIVE: List[bool] = []


def _case_insensitive() -> bool:
    if not _INSENSITIVE:
        here = os.path.realpath(".")
        swapped = here.swapcase()
        _INSENSITIVE.append(swapped != here and os.path.exists(swapped) and os.path.samefile(here, swapped))
    return _INSENSITIVE[0]
