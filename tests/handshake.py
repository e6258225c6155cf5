"""Cross-process handshakes for the kill and concurrency tests, with no sleeping and no polling.

The test creates named pipes (FIFOs) and keeps each open for reading and writing while it runs
(`Pipes`). So a byte a process writes is kept until it is read, even before its reader has opened
the pipe; a read blocks until a byte arrives and wakes the moment one does; and once the test is
gone, a child's read returns at once (no writer is left), so nothing waits forever.

Children call `post` (write one byte) and `take` (read one byte). The test waits with
`Pipes.wait`, which also returns at once, with the process's stderr, if a watched process exits
first (Linux: select() on a pidfd; elsewhere it looks at the processes every 0.1 s). Uses: hold a runner at its N-th call until it is killed (`hold`), a barrier (each child posts
"arrived", the test waits for all of them, then posts "go" once per child), and turns (each child
takes its own pipe's byte before a call and posts the next child's after it: the calls interleave
in a fixed order).
"""
from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterable, Sequence, Union

from helpers import WAIT_DEADLINE_S, exited_before

HOLD_ENV = "HANDSHAKE_HOLD"              # "N:PIPE": at its N-th call a double posts PIPE, then blocks
TURN_ENV = "HANDSHAKE_TURN"              # "MINE:NEXT": a call takes MINE's byte first, posts NEXT's after


def post(path: str, count: int = 1) -> None:
    """Write `count` bytes to the pipe (the test holds it open, so this never blocks)."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)     # no reader (the test is gone): raises ENXIO
    try:
        os.write(fd, b"." * count)
    finally:
        os.close(fd)


def take(path: str) -> None:
    """Read one byte from the pipe: block until one is there. Raises once the test is gone."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # opening does not wait for a writer; reading does
    os.set_blocking(fd, True)
    try:
        if not os.read(fd, 1):
            raise RuntimeError("handshake: %s has no writer left (the test is gone)" % path)
    finally:
        os.close(fd)


def hold(calls: int) -> None:
    """For a runner double, at the top of each call: on call N of $HANDSHAKE_HOLD ("N:PIPE"), post PIPE and
    block until the process is killed (or the test is gone: then raise, so the run fails)."""
    spec = os.environ.get(HOLD_ENV)
    if spec and calls == int(spec.split(":", 1)[0]):
        path = spec.split(":", 1)[1]
        post(path)
        take(path + ".never")            # nobody writes it: only the kill ends this call
        raise RuntimeError("handshake: held call %d was released" % calls)


class Pipes:
    """FIFOs named `names` in `folder`, each held open (read and write) by this process until close()."""

    def __init__(self, folder: Union[str, Path], *names: str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.fds: Dict[str, int] = {}
        for name in names:
            os.mkfifo(self.path(name))
            self.fds[name] = os.open(self.path(name), os.O_RDWR | os.O_NONBLOCK)   # never blocks on Linux

    def path(self, name: str) -> str:
        return str(self.folder / name)

    def hold_env(self, name: str, call: int) -> Dict[str, str]:
        """The environment that holds a double at its `call`-th call, posting pipe `name` (see hold())."""
        never = name + ".never"
        if never not in self.fds:
            os.mkfifo(self.path(never))
            self.fds[never] = os.open(self.path(never), os.O_RDWR | os.O_NONBLOCK)
        return {HOLD_ENV: "%d:%s" % (call, self.path(name))}

    def post(self, name: str, count: int = 1) -> None:
        os.write(self.fds[name], b"." * count)

    def wait(self, name: str, count: int, procs: Union[subprocess.Popen, Sequence[subprocess.Popen]],
             what: str) -> None:
        """Read `count` bytes from pipe `name`; fail, with its stderr, if a process in `procs` exits first,
        or after WAIT_DEADLINE_S."""
        procs = [procs] if isinstance(procs, subprocess.Popen) else list(procs)
        pidfd = getattr(os, "pidfd_open", None)          # Linux: a process's exit wakes select()
        exits = {pidfd(p.pid): p for p in procs} if pidfd else {}
        deadline, got = time.monotonic() + WAIT_DEADLINE_S, 0
        try:
            while got < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("gave up waiting for %s (%d of %d)" % (what, got, count))
                slice_s = left if pidfd else min(left, 0.1)   # elsewhere: look at the processes every 0.1 s
                ready = select.select([self.fds[name], *exits], [], [], slice_s)[0]
                if self.fds[name] in ready:
                    try:
                        got += len(os.read(self.fds[name], count - got))
                    except BlockingIOError:
                        pass
                    continue
                gone = [exits[fd] for fd in ready] or [p for p in procs if not pidfd and p.poll() is not None]
                if gone:
                    raise exited_before(gone[0], what)
        finally:
            for fd in exits:
                os.close(fd)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def __enter__(self) -> "Pipes":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def turns(pipes: Pipes, names: Iterable[str]) -> Dict[str, Dict[str, str]]:
    """The environment of each child named in `names` (pipes of `pipes`): they take turns in that order,
    starting once the test posts the first name's pipe."""
    names = list(names)
    return {n: {TURN_ENV: "%s:%s" % (pipes.path(n), pipes.path(names[(i + 1) % len(names)]))}
            for i, n in enumerate(names)}


def my_turn() -> None:
    """For a runner double, at the top of each call: wait for this process's turn ($HANDSHAKE_TURN)."""
    spec = os.environ.get(TURN_ENV)
    if spec:
        take(spec.split(":", 1)[0])


def next_turn() -> None:
    """At the end of each call: the next process's turn."""
    spec = os.environ.get(TURN_ENV)
    if spec:
        post(spec.split(":", 1)[1])
