"""Exclusive file locks on POSIX (flock) and Windows (msvcrt), so nothing imports fcntl at module top.

Both kinds are dropped by the operating system when the holding process dies (even `kill -9`), which
is what the commit protocol relies on to tell a dead writer's staging area from a live one.
"""
from __future__ import annotations

import os
import time

try:                                    # POSIX
    import fcntl as _fcntl
    _msvcrt = None
except ImportError:                     # Windows
    _fcntl = None
    import msvcrt as _msvcrt            # type: ignore[no-redef]

_POLL_S = 0.05


def lock(fd: int, blocking: bool = True) -> bool:
    """Lock the open file `fd` exclusively; without `blocking`, return False when another process holds it."""
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | (0 if blocking else _fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True
    while True:                         # msvcrt locks a byte range; its own blocking mode gives up after 10 s
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            if not blocking:
                return False
        time.sleep(_POLL_S)


def unlock(fd: int) -> None:
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
        return
    os.lseek(fd, 0, os.SEEK_SET)
    _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1)
