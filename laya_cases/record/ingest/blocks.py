"""An answers file's physical lines, a block at a time, as Arrow strings (record/ingest/bulk.py reads them)."""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.core.errors import UsageError


class Fallback(Exception):
    """The file is read by the per-row path from its first line."""


def read_blocks(path: str, block_bytes: int) -> Iterator[pa.Array]:
    """The file's physical lines, a block at a time, as Arrow strings (without their newline)."""
    try:
        with open(path, "rb") as handle:
            rest = b""
            while True:
                data = bytearray(len(rest) + block_bytes + 1)       # read in place: the block is not copied
                data[:len(rest)] = rest
                got = handle.readinto(memoryview(data)[len(rest):len(rest) + block_bytes])
                size = len(rest) + got
                cut = data.rfind(b"\n", 0, size) + 1 if got else size
                rest = bytes(data[cut:size])
                if cut:
                    if not got and data[cut - 1] != 10:          # the last line has no newline
                        data[cut], cut = 10, cut + 1
                    yield _lines(data, cut)
                if not got:
                    return
    except OSError as exc:
        raise UsageError("%s cannot be read: %s" % (path, exc)) from None


def _lines(data: bytearray, cut: int) -> pa.Array:
    """The lines of data[:cut], which ends with a newline, as Arrow strings (universal newlines: see Fallback)."""
    if data.find(b"\r", 0, cut) >= 0:
        raise Fallback("carriage return")
    whole = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, cut], np.int64)), pa.py_buffer(data))
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        raise Fallback("not UTF-8") from None
    lines = pc.split_pattern(whole, "\n").flatten()
    return lines.slice(0, len(lines) - 1).cast(pa.string())
