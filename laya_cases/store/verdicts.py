"""The footer check's healthy verdicts, kept between processes (issue 30: `laya-cases runs` over 1,000 runs).

check.py reads every footer and null count of every run a reader opens; for a store of many runs that is
most of `laya-cases runs`. A run found healthy is remembered here, keyed by what the check read: for each of
its files (check.run_files: run.parquet, slice sets, case files, by name) the stat fields (device, inode,
size, mtime_ns, ctime_ns). A later reader whose stat of every file of the run gives the same key skips the
run's footers; any other key (a file added, removed, replaced, rewritten, touched) is a miss and the run is
checked again. Damaged runs are never remembered: they are checked, and named, every time.

The cache lives outside the store (readers never write under a warehouse root): one JSON file per store
root in `$LAYA_CASES_CHECK_CACHE` (a directory; `off` or an empty value turns the cache off), by default
`$XDG_CACHE_HOME/laya-cases/checks` (`~/.cache/laya-cases/checks`). A missing, unreadable, corrupt or
foreign file, or one written by other check code (a digest of check.py and this file), is a miss: nothing
fails because of it, and one that cannot be written is not written.

What the stat key cannot see, and why it is handled: a file rewritten in place keeping its size, inode and
both timestamps. ctime cannot be set by a user (utime sets it to now); the timestamps can only stay equal
when the rewrite lands within the file system's timestamp granularity (a clock tick, up to 2 s on FAT)
of the moment they were taken. So, as git does with its index ("racily clean" entries), a verdict is
remembered only when every file's mtime and ctime are at least RACY_NS older than the moment the check
began: any write after that moves a timestamp to a later tick, and changes the key. What remains is a
writer that resets the system clock, or a network file system whose server clock runs behind ours by more
than RACY_NS; `laya-cases check` (which uses no cache) decodes every page in any case.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from typing import Callable, Dict, Iterable, List, Optional, Tuple

CHECK_CACHE_ENV = "LAYA_CASES_CHECK_CACHE"
RACY_NS = 3 * 10 ** 9        # timestamps newer than this at check time are not trusted to change on a write
_FORMAT = 1
_CODE: List[str] = []        # digest of the check's code, computed once


def _code_digest() -> str:
    if not _CODE:
        digest = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("check.py", "verdicts.py", "schema.py"):
            try:
                with open(os.path.join(here, name), "rb") as source:
                    digest.update(source.read())
            except OSError:
                digest.update(b"?")
        _CODE.append(digest.hexdigest()[:16])
    return _CODE[0]


def cache_dir() -> Optional[str]:
    """Where the verdict files go, or None when the cache is off."""
    value = os.environ.get(CHECK_CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "0", "no", "false") else value
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "laya-cases", "checks")


def _file_of(root: str) -> Optional[str]:
    folder = cache_dir()
    if folder is None:
        return None
    return os.path.join(folder, hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json")


def file_key(paths: Iterable[str]) -> Optional[list]:
    """[[name, dev, ino, size, mtime_ns, ctime_ns], ...] of these files, or None when one cannot be
    looked at (the check then names it)."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        out.append([path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return out


def settled(key: list, began_ns: int) -> bool:
    """Whether every file's timestamps are old enough that a later write must change them (module doc)."""
    return all(max(entry[4], entry[5]) < began_ns - RACY_NS for entry in key)


def load(root: str) -> Dict[str, list]:
    """{run id: key} of the runs of `root` (a resolved path) found healthy before; {} on any problem."""
    path = _file_of(root)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("code") != _code_digest() \
            or doc.get("root") != root or not isinstance(doc.get("runs"), dict):
        return {}
    return doc["runs"]


def save(root: str, runs: Dict[str, list]) -> None:
    """Replace the verdicts of `root` (a resolved path) with `runs`; a cache that cannot be written is skipped."""
    path = _file_of(root)
    if path is None:
        return
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"format": _FORMAT, "code": _code_digest(), "root": root, "runs": runs}, handle,
                      separators=(",", ":"))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


# ---------------------------------------------------------------------------- the runs rows of remembered runs
# `laya-cases runs` reads one small run.parquet per run: a thousand files are most of its time once the footers
# are remembered. The rows of remembered runs are kept too, in one Parquet file beside the verdicts, named by
# its content's SHA-256 (never rewritten in place), each run's row valid only while its run.parquet gives the
# stat entry recorded with it. The file's digest is checked before it is read: a damaged cache is a miss.
def _snapshot_index(root: str) -> Optional[str]:
    path = _file_of(root)
    return None if path is None else path[: -len(".json")] + ".runs.json"


def snapshot_load(root: str) -> Optional[Tuple[str, Dict[str, list]]]:
    """(path of the rows file, {run id: run.parquet's stat entry}) of `root`, or None on any problem."""
    index = _snapshot_index(root)
    if index is None:
        return None
    try:
        with open(index, encoding="utf-8") as handle:
            doc = json.load(handle)
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("code") != _code_digest() \
                or doc.get("root") != root or not isinstance(doc.get("keys"), dict):
            return None
        path = os.path.join(os.path.dirname(index), str(doc["file"]))
        with open(path, "rb") as handle:
            if hashlib.sha256(handle.read()).hexdigest() != doc.get("sha256"):
                return None
    except (OSError, ValueError, UnicodeDecodeError, KeyError, TypeError):
        return None
    return path, doc["keys"]


def snapshot_save(root: str, keys: Dict[str, list], write: Callable[[str], None]) -> None:
    """Keep the rows of the runs in `keys`: write(path) writes them as Parquet; then the index names the
    file. Anything that fails leaves no snapshot (a miss next time)."""
    index = _snapshot_index(root)
    if index is None:
        return
    folder = os.path.dirname(index)
    tmp = os.path.join(folder, "%s.%d.parquet.tmp" % (os.path.basename(index), os.getpid()))
    tmp_index = "%s.%d.tmp" % (index, os.getpid())
    old = snapshot_load(root)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        write(tmp)
        with open(tmp, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        name = "%s.%s.parquet" % (os.path.basename(index)[: -len(".runs.json")], digest[:16])
        os.replace(tmp, os.path.join(folder, name))
        with open(tmp_index, "w", encoding="utf-8") as handle:
            json.dump({"format": _FORMAT, "code": _code_digest(), "root": root, "file": name, "sha256": digest,
                       "keys": keys}, handle, separators=(",", ":"))
        os.replace(tmp_index, index)
    except Exception:                       # noqa: BLE001  (DuckDB's errors too: the cache is never a failure)
        for path in (tmp, tmp_index):
            try:
                os.unlink(path)
            except OSError:
                pass
        return
    if old is not None and os.path.basename(old[0]) != name:
        try:                                # a reader that loaded it already holds its rows in memory
            os.unlink(old[0])
        except OSError:
            pass


def present(path: str) -> bool:
    """layout.present for a path string: a regular file, or something that cannot be looked at."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def parquet_names(folder: str, missing_ok: bool = False) -> List[str]:
    """The *.parquet names in `folder`, sorted; [] when it cannot be listed (raises OSError other than a
    missing folder when `missing_ok`, as case_files treats them)."""
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".parquet"))
    except FileNotFoundError:
        return []
    except OSError:
        if missing_ok:
            raise
        return []
