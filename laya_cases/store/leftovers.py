"""What killed writers leave behind: staging areas whose writer is gone, partitions no runs entry owns.

Kept apart from write.py so that reading it (`laya-cases runs` names leftovers on stderr) imports
neither pyarrow nor numpy; `gc` (write.gc) removes what these functions find.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import List, Optional

from laya_cases.store.locks import lock, unlock
from laya_cases.store.layout import PARTITION, RUN_ID_PATTERN, Layout, is_run_id

_STAGING_NAME = re.compile(r"^(%s)\.(\d+)\.[0-9a-f]{8}$" % RUN_ID_PATTERN)
# between a writer's mkdir and its flock there is a moment without the lock: a young area whose pid
# is alive is kept (older than this, a free lock means its writer is gone even if the pid was reused)
_GRACE_S = 60.0
LOCK_FILE = "writer.lock"


def sweep_staging(wh: Layout, keep: Optional[Path] = None) -> List[str]:
    """Remove the staging areas of dead writers (call under the commit lock); returns their paths."""
    removed: List[str] = []
    for path in dead_areas(wh, keep):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):        # report only what is really gone
            removed.append(str(path))
    return removed


def dead_areas(wh: Layout, keep: Optional[Path] = None) -> List[Path]:
    """Staging areas whose writer is gone. Only directories named as laya-cases names them are
    considered; anything else is left alone."""
    dead: List[Path] = []
    try:
        names = sorted(os.listdir(wh.staging_dir))
    except OSError:
        return dead
    for name in names:
        match = _STAGING_NAME.match(name)
        path = wh.staging_dir / name
        if not match or path == keep or not is_run_id(match.group(1)) or os.path.islink(path) \
                or not path.is_dir():
            continue
        if _writer_gone(path, int(match.group(2))):
            dead.append(path)
    return dead


def _writer_gone(path: Path, pid: int) -> bool:
    try:
        fd = os.open(str(path / LOCK_FILE), os.O_RDWR)
    except FileNotFoundError:            # died before making its lock file (or a foreign area)
        return not (_young(path) and _alive(pid))
    except OSError:
        return False
    try:
        if not lock(fd, blocking=False):
            return False                 # its writer holds the lock: alive
        unlock(fd)
        return not (_young(path) and _alive(pid))
    finally:
        os.close(fd)


def writer_alive(wh: Layout, name: str) -> bool:
    """Whether the writer of the staging area `name` (as a progress entry names it) is still alive."""
    match = _STAGING_NAME.match(name)
    path = wh.staging_dir / name
    return bool(match) and path.is_dir() and not _writer_gone(path, int(match.group(2)))


def _young(path: Path) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < _GRACE_S
    except OSError:
        return False



def orphan_partitions(wh: Layout) -> List[Path]:
    """Partitions `cases/run_id=<id>/` and `slice_sets/run_id=<id>/` of a valid id with no runs entry
    (a damaged run's entry keeps its files) and no progress entry (an incomplete run keeps them)."""
    found = []
    for parent in (wh.cases_dir, wh.slice_sets_dir):
        try:
            names = sorted(os.listdir(parent))
        except OSError:
            continue
        for name in names:
            rid = name[len(PARTITION):]
            path = parent / name
            if not name.startswith(PARTITION) or not is_run_id(rid) or os.path.islink(path) or not path.is_dir():
                continue
            if not os.path.lexists(wh.run_entry(rid)) and not os.path.lexists(wh.progress_file(rid)):
                found.append(path)
    return found


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":                  # os.kill(pid, 0) would terminate it: keep a young area, sweep it later
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
