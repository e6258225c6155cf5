"""CPython's `random.Random(seed).randrange(n)` index stream, drawn fast and exactly (S9.5, S8.9).

The bootstrap's resampling indices must be the ones CPython draws, replicate by replicate, so our
intervals match the reference harnesses'. CPython's randrange(n) takes k = n.bit_length() bits from
one 32-bit Mersenne Twister output (word >> (32 - k)) and draws again while the value is >= n.
numpy's MT19937 is the same generator, so we copy CPython's state into it, draw 32-bit words in
blocks and apply the same rejection in order. Exact for n < 2**32; checked against `random` in tests.
"""
from __future__ import annotations

import queue
import random
import threading
from typing import Iterator, Optional, Tuple

import numpy as np


def _bit_generator(seed: int) -> np.random.MT19937:
    """numpy's MT19937 in the state CPython's random.Random(seed) starts in."""
    _version, internal, _gauss = random.Random(seed).getstate()
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937",
                  "state": {"key": np.array(internal[:624], dtype=np.uint32), "pos": internal[624]}}
    return bits


class IndexStream:
    """`rng.randrange(n)` values, rng = random.Random(seed), taken in any number of pieces in order.

    Words are drawn in blocks; accepted values past what a take needs wait for the next take, so
    consecutive takes are exactly the one stream (a bootstrap draws it replicate batch by batch).
    """

    def __init__(self, seed: int, n: int):
        if not 1 <= n < 2 ** 32:
            raise ValueError("n must be in [1, 2**32), got %d" % n)
        self._bits = _bit_generator(seed)
        self._n = n
        self._shift = np.uint64(32 - n.bit_length())
        self._ahead = np.empty(0, dtype=np.int64)     # accepted values drawn but not yet taken

    def take(self, count: int) -> np.ndarray:
        out = np.empty(count, dtype=np.int64)
        filled = min(count, len(self._ahead))
        out[:filled] = self._ahead[:filled]
        self._ahead = self._ahead[filled:]
        while filled < count:
            need = count - filled                     # words in pieces: a few MB at a time, whatever count is
            words = self._bits.random_raw(min(need + need // 2 + 64, 1 << 20))   # uint64: shifted in place
            words >>= self._shift
            accepted = words[words < np.uint64(self._n)].astype(np.int64)
            take = min(need, len(accepted))
            out[filled:filled + take] = accepted[:take]
            self._ahead = accepted[take:]
            filled += take
        return out


def randrange_stream(seed: int, n: int, count: int) -> np.ndarray:
    """The first `count` values of `[rng.randrange(n) for _ in range(count)]`, rng = random.Random(seed)."""
    return IndexStream(seed, n).take(count)


#: Draws per batch of replicates (8 bytes each, a few arrays of it live at once): memory stays flat in B.
BATCH_DRAWS = 1 << 20


def replicate_batches(seed: int, n: int, replicates: int, batch_draws: Optional[int] = None):
    """Yield (first, last, replicate, position, multiplicity) batch by batch: replicates [first, last)
    with every row drawn at least once in each, replicate b being draws [b*n, (b+1)*n) of the stream:
    n draws of randrange(n) (S9.5). At least one replicate per batch, about batch_draws draws."""
    if n == 0 or replicates == 0:
        return
    stream = IndexStream(seed, n)
    per_batch = max(1, (batch_draws or BATCH_DRAWS) // n)
    for first in range(0, replicates, per_batch):
        last = min(replicates, first + per_batch)
        draws = stream.take((last - first) * n)
        if last - first > 1:                          # one replicate a batch (n >= batch_draws): no offsets
            draws += np.repeat(np.arange(last - first, dtype=np.int64) * n, n)
        counts = np.bincount(draws, minlength=(last - first) * n)
        del draws
        drawn = np.flatnonzero(counts)
        if last - first == 1:                         # a large n: no quotient or remainder arrays of n values
            yield first, last, np.full(len(drawn), first, dtype=np.int64), drawn, counts[drawn]
        else:
            yield first, last, drawn // n + first, drawn % n, counts[drawn]


class _Words:
    """The generator's 32-bit words (as int64), in order, drawn ahead on a thread: numpy lets go of the
    GIL while it draws, so the Mersenne Twister runs on one core while the caller counts on the other."""

    CHUNK = 1 << 20

    def __init__(self, seed: int):
        self._chunks: "queue.Queue[np.ndarray]" = queue.Queue(maxsize=4)
        self._stop = threading.Event()
        self._rest = np.empty(0, dtype=np.int64)
        self._thread = threading.Thread(target=self._draw, args=(np.random.Generator(_bit_generator(seed)),),
                                        daemon=True)
        self._thread.start()

    def _draw(self, gen: np.random.Generator) -> None:
        while not self._stop.is_set():
            chunk = gen.integers(0, 1 << 32, self.CHUNK, dtype=np.int64)    # one word each, unmasked
            while not self._stop.is_set():
                try:
                    self._chunks.put(chunk, timeout=0.1)
                    break
                except queue.Full:
                    continue

    def take(self, count: int) -> Iterator[np.ndarray]:
        """The next `count` words, as views of the chunks they lie in (not copied into one array)."""
        got = 0
        while got < count:
            if not len(self._rest):
                self._rest = self._chunks.get()
            piece, self._rest = self._rest[:count - got], self._rest[count - got:]
            got += len(piece)
            yield piece

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


#: Draws between two of class_counts's batches when it counts as drawn (a progress bar moves with them).
PROGRESS_DRAWS = 1 << 24

#: From this many rows on, class_counts counts a replicate's draws as they come (no index array kept).
COUNT_AS_DRAWN = 1 << 15


def class_counts(seed: int, n: int, replicates: int, classes: np.ndarray,
                 n_classes: int) -> Iterator[Tuple[int, int, np.ndarray]]:
    """Yield (first, last, counts) batch by batch: counts[r, c] is how many of replicate first + r's n
    draws of randrange(n) (S9.5) fell on a row u with classes[u] == c. The same stream as
    replicate_batches, counted per class: a bootstrap whose replicate adds up rows' counts needs no more.

    Large n: a replicate takes n words; each word w is row w >> (32 - k) or a rejection (row >= n, the
    table's last class), and the rejections are drawn again, as many words as were rejected, so no word
    past the replicate's last is taken. Small n: the index stream in batches, as replicate_batches."""
    if n == 0 or replicates == 0:
        return
    if n < COUNT_AS_DRAWN:
        for first, last, replicate, position, multiplicity in replicate_batches(seed, n, replicates):
            cells = (replicate - first) * n_classes + classes[position]
            yield first, last, np.bincount(cells, weights=multiplicity, minlength=(last - first) * n_classes
                                           ).astype(np.int64).reshape(last - first, n_classes)
        return
    k = n.bit_length()
    table = np.full(1 << k, n_classes, dtype=np.min_scalar_type(n_classes))
    table[:n] = classes
    per_batch = max(1, min(BATCH_DRAWS // n_classes, PROGRESS_DRAWS // n))     # a batch every ~0.1 s
    words = _Words(seed)
    try:
        for first in range(0, replicates, per_batch):
            last = min(replicates, first + per_batch)
            counts = np.zeros((last - first, n_classes + 1), dtype=np.int64)
            for r in range(last - first):
                need = n
                while need:
                    for piece in words.take(need):
                        counts[r] += np.bincount(table[piece >> (32 - k)], minlength=n_classes + 1)
                    need = int(counts[r, n_classes])
                    counts[r, n_classes] = 0
            yield first, last, counts[:, :n_classes]
    finally:
        words.close()


def replicate_weights(seed: int, n: int, replicates: int):
    """(replicate, position, multiplicity) of every row drawn at least once, for all replicates at once."""
    parts = list(replicate_batches(seed, n, replicates))
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    return tuple(np.concatenate([p[i] for p in parts]) for i in (2, 3, 4))


def quantile_levels(level: float):
    """The two percentile levels of a central interval: 0.95 -> (0.025, 0.975), not 0.025000000000000022."""
    tail = round((1.0 - level) / 2.0, 12)
    return tail, 1.0 - tail
