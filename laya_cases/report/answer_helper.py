"""A helper process that renders batches of report --json cases (laya_cases/report/stream.py), so the Python
work of a large `cases` list runs on two cores: `python -m laya_cases.report.answer_worker`, fed on stdin.

One batch is in flight at a time (the caller reads a result before it sends the next batch), so neither
side can block the other on a full pipe. A plain child process, not multiprocessing: multiprocessing's
spawn re-runs the caller's main script, which a library must not do to a user's script. Frames both
ways: 4-byte length, then marshal of (first, answer texts, rest texts) in, and out the batch's text as
UTF-8 bytes, or a 1-tuple with the error's text when a batch cannot be rendered (the caller then renders
it itself, to raise the error it would have raised alone).
"""
from __future__ import annotations

import marshal
import struct
import subprocess
import sys
from typing import Any, BinaryIO, List, Optional

_LEN = struct.Struct("<I")


def send(out: BinaryIO, value: Any) -> None:
    data = marshal.dumps(value)
    out.write(_LEN.pack(len(data)))
    out.write(data)
    out.flush()


def receive(stream: BinaryIO) -> Optional[Any]:
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    return marshal.loads(stream.read(_LEN.unpack(head)[0]))


class Helper:
    """The helper process: submit(first, answers, rests), then result() -> the batch's UTF-8 text, or None
    (render it here)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "laya_cases.report.answer_worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def submit(self, first: str, answers: List[Optional[str]], rests: List[str]) -> None:
        try:
            send(self.process.stdin, (first, answers, rests))
        except (OSError, ValueError):                # the helper is gone: result() says so
            pass

    def result(self) -> Optional[bytes]:
        try:
            got = receive(self.process.stdout)
        except (OSError, ValueError, EOFError):
            return None
        return got if isinstance(got, bytes) else None

    def close(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):     # a helper still writing gets a broken pipe
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
