"""CPython's `random.Random(seed).randrange(n)` index stream, drawn fast and exactly (S9.5, S8.9).

The bootstrap's resampling indices must be the ones CPython draws, replicate by replicate, so our
intervals match the reference harnesses'. CPython's randrange(n) takes k = n.bit_length() bits from
one 32-bit Mersenne Twister output (word >> (32 - k)) and draws again while the value is >= n.
numpy's MT19937 is the same generator, so we copy CPython's state into it, draw 32-bit words in
blocks and apply the same rejection in order. Exact for n < 2**32; checked against `random` in tests.
"""
from __future__ import annotations

import random

import numpy as np


def randrange_stream(seed: int, n: int, count: int) -> np.ndarray:
    """The first `count` values of `[rng.randrange(n) for _ in range(count)]`, rng = random.Random(seed)."""
    if not 1 <= n < 2 ** 32:
        raise ValueError("n must be in [1, 2**32), got %d" % n)
    _version, internal, _gauss = random.Random(seed).getstate()
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937",
                  "state": {"key": np.array(internal[:624], dtype=np.uint32), "pos": internal[624]}}
    shift = np.uint64(32 - n.bit_length())
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:                     # words past the last one used are never looked at
        need = count - filled
        words = bits.random_raw(need + need // 2 + 64).astype(np.uint64) >> shift
        accepted = words[words < np.uint64(n)]
        take = min(need, len(accepted))
        out[filled:filled + take] = accepted[:take]
        filled += take
    return out


def replicate_weights(seed: int, n: int, replicates: int):
    """(replicate, position, multiplicity) of every row drawn at least once, replicate by replicate.

    Replicate b is draws [b*n, (b+1)*n) of the stream: n draws of randrange(n) (S9.5).
    """
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    draws = randrange_stream(seed, n, n * replicates)
    counts = np.bincount(np.repeat(np.arange(replicates, dtype=np.int64), n) * n + draws,
                         minlength=replicates * n)
    drawn = np.flatnonzero(counts)
    return drawn // n, drawn % n, counts[drawn]


def quantile_levels(level: float):
    """The two percentile levels of a central interval: 0.95 -> (0.025, 0.975), not 0.025000000000000022."""
    tail = round((1.0 - level) / 2.0, 12)
    return tail, 1.0 - tail
