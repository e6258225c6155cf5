"""ece, brier and aurc summed the way the reference (laya-evals 0.4.15) sums them, without laya.

Ours are exactly rounded sums (S9.8): the same under any case order. The reference's are numpy
means and sums over the paired cases in case order (pairwise summation), which can differ from ours
in the last bit. A baseline written by the reference is compared at tolerance 0 by default (S6.4),
so that one comparison reads these three the reference's way: the same numpy calls, in the same
order, over the same arrays (laya.evals.ece / common.ece_score, laya.evals.brier, laya.evals.aurc).
tests/query/test_reference_order.py checks them bit for bit against laya on random inputs with ties.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence

import numpy as np


def ece(conf: np.ndarray, correct: np.ndarray, bins: int = 15) -> float:
    """common.ece_score: equal-width bins from np.linspace, bin 0 closed below, a left fold."""
    edges = np.linspace(0, 1, bins + 1)
    e = 0.0
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        sel = (conf >= lo if i == 0 else conf > lo) & (conf <= hi)
        if sel.any():
            e += sel.mean() * abs(conf[sel].mean() - correct[sel].mean())
    return float(e)


def brier(conf: np.ndarray, correct: np.ndarray) -> float:
    return float(np.mean((conf - correct.astype(float)) ** 2))


def aurc(conf: np.ndarray, correct: np.ndarray) -> float:
    """evals.aurc: one level per distinct confidence (NaNs one level, last), risk weighted by rows."""
    order = np.argsort(-conf, kind="mergesort")
    c, y = conf[order], correct[order]
    boundary = c[1:] != c[:-1]
    if np.isnan(c[-1]):
        boundary &= ~(np.isnan(c[1:]) & np.isnan(c[:-1]))
    last = np.flatnonzero(np.concatenate((boundary, [True])))
    accepted = last.astype(float) + 1.0
    hits = np.cumsum(y)[last]
    risk = 1.0 - hits / accepted
    rows_per_level = np.diff(np.concatenate(([0.0], accepted)))
    return float(np.sum(risk * rows_per_level) / len(y))


FUNCTIONS = {"ece": ece, "brier": brier, "aurc": aurc}


def reference_order_values(cases: Optional[Sequence[Dict[str, Any]]]) -> Dict[str, float]:
    """{ece, brier, aurc} over a report's paired cases in case order (row, then `expected` order, S4.4);
    NaN values are left out, as the reference drops them; empty when no case is paired."""
    paired = [(c["confidence"], c["correct"]) for c in cases or ()
              if isinstance(c, dict) and c.get("confidence") is not None and c.get("correct") is not None]
    if not paired:
        return {}
    conf = np.asarray([p[0] for p in paired], dtype=float)
    correct = np.asarray([p[1] for p in paired], dtype=bool)
    out = {}
    for name, fn in FUNCTIONS.items():
        value = fn(conf, correct)
        if not math.isnan(value):
            out[name] = value
    return out
