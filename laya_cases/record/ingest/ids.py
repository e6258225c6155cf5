"""Case ids for the column-wise `ingest` (record/ingest/bulk.py), computed and numbered in bulk.

A case id is `blake2b-80(<state JSON> NUL <qid> NUL <question body JSON>)` in lowercase hex, and the
n-th case of a run with the same digest gets `#n` (decisions.case_digest / DecisionBuffer._number:
the definition is theirs, this module only computes it faster). The digests of every case seen so far
are kept as 10-byte values in a few sorted numpy arrays (merged like a binary counter), not as
Python strings, so the memory they take is 10 bytes a case whatever the file's size; only digests
that really repeat are counted in a dict.
"""
from __future__ import annotations

import hashlib
from typing import Dict, Iterable, List, Optional

import numpy as np
import pyarrow as pa

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NIBBLE = np.zeros(256, dtype=np.uint8)
_NIBBLE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)
DIGEST = 10                              # bytes of a case digest (20 hex digits)


def digests(keys: Iterable[bytes], suffix: bytes = b"") -> bytes:
    """The blake2b-80 digests of each key followed by `suffix`, concatenated (10 bytes each)."""
    copy = hashlib.blake2b(digest_size=DIGEST).copy       # a copy is cheaper than a new hasher
    out: List[bytes] = []
    append = out.append
    for key in keys:
        h = copy()
        h.update(key)
        h.update(suffix)
        append(h.digest())
    return b"".join(out)


def to_hex(raw: bytes) -> pa.Array:
    """Concatenated 10-byte digests as an Arrow string array of 20 lowercase hex digits each."""
    n = len(raw) // DIGEST
    b = np.frombuffer(raw, dtype=np.uint8)
    text = np.empty(2 * len(b), dtype=np.uint8)
    text[0::2], text[1::2] = _HEX[b >> 4], _HEX[b & 15]
    offsets = np.arange(0, 2 * DIGEST * n + 1, 2 * DIGEST, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))


def from_hex(column: pa.Array) -> np.ndarray:
    """The non-null values of a string array of digests (20 hex digits each), as numpy 'S10'."""
    values = column.drop_null() if column.null_count else column
    k = len(values)
    if k == 0:
        return np.empty(0, dtype="S%d" % DIGEST)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + k + 1]
    if offsets[-1] - offsets[0] != 2 * DIGEST * k or not (np.diff(offsets) == 2 * DIGEST).all():
        raise ValueError("a case digest is not 20 hex digits")        # never: every digest is a hexdigest()
    text = np.frombuffer(values.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]].reshape(k, 2 * DIGEST)
    pairs = _NIBBLE[text]
    return ((pairs[:, 0::2] << 4) | pairs[:, 1::2]).astype(np.uint8).view("S%d" % DIGEST).ravel()


class CaseNumbers:
    """How many cases of the run so far had each digest (DecisionBuffer._seen, 10 bytes a digest)."""

    def __init__(self) -> None:
        self.runs: List[np.ndarray] = []          # sorted, disjoint; sizes shrink along the list
        self.repeats: Dict[bytes, int] = {}       # digests seen more than once: their count

    def _contains(self, d: np.ndarray) -> np.ndarray:
        found = np.zeros(len(d), dtype=bool)
        for run in self.runs:
            pos = np.searchsorted(run, d)
            inside = pos < len(run)
            found[inside] |= run[pos[inside]] == d[inside]
        return found

    def number(self, d: np.ndarray) -> Optional[Dict[int, int]]:
        """Count the digests `d` (in run order); {position: n} for the positions whose n is not 1."""
        unique, inverse, counts = np.unique(d, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        seen = self._contains(unique)
        numbers: Dict[int, int] = {}
        hit = seen | (counts > 1)              # seen before, or more than once here: counted one by one
        if hit.any():
            for pos in np.flatnonzero(hit[inverse]).tolist():
                digest = bytes(d[pos])         # numpy drops trailing NUL bytes: the same for every copy
                n = self.repeats.get(digest, 1 if seen[inverse[pos]] else 0) + 1
                self.repeats[digest] = n
                if n > 1:
                    numbers[pos] = n
        self._add(unique[~seen])
        return numbers or None

    def _add(self, fresh: np.ndarray) -> None:
        if not len(fresh):
            return
        self.runs.append(fresh)
        while len(self.runs) > 1 and len(self.runs[-2]) <= 2 * len(self.runs[-1]):
            merged = np.concatenate([self.runs[-2], self.runs.pop()])
            merged.sort()                    # in place: the merge holds the runs and one copy, no more
            self.runs[-1] = merged
