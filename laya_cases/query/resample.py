"""CPython's `random.Random(seed).randrange(n)` index stream, drawn fast and exactly (S9.5, S8.9).

The bootstrap's resampling indices must be the ones CPython draws, replicate by replicate, so our
intervals match the reference harnesses'. CPython's randrange(n) takes k = n.bit_length() bits from
one 32-bit Mersenne Twister output (word >> (32 - k)) and draws again while the value is >= n.
numpy's MT19937 is the same generator, so we copy CPython's state into it, draw 32-bit words in
blocks and apply the same rejection in order. Exact for n < 2**32; checked against `random` in tests.
"""
from __future__ import annotations

import random
from typing import Optional

import numpy as np


class IndexStream:
    """`rng.randrange(n)` values, rng = random.Random(seed), taken in any number of pieces in order.

    Words are drawn in blocks; accepted values past what a take needs wait for the next take, so
    consecutive takes are exactly the one stream (a bootstrap draws it replicate batch by batch).
    """

    def __init__(self, seed: int, n: int):
        if not 1 <= n < 2 ** 32:
            raise ValueError("n must be in [1, 2**32), got %d" % n)
        _version, internal, _gauss = random.Random(seed).getstate()
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": np.array(internal[:624], dtype=np.uint32), "pos": internal[624]}}
        self._n = n
        self._shift = np.uint64(32 - n.bit_length())
        self._ahead = np.empty(0, dtype=np.int64)     # accepted values drawn but not yet taken

    def take(self, count: int) -> np.ndarray:
        out = np.empty(count, dtype=np.int64)
        filled = min(count, len(self._ahead))
        out[:filled] = self._ahead[:filled]
        self._ahead = self._ahead[filled:]
        while filled < count:
            need = count - filled
            words = self._bits.random_raw(need + need // 2 + 64)     # uint64 already: shifted in place
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
        yield first, last, drawn // n + first, drawn % n, counts[drawn]


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
