"""Hand numpy Holm step-down and Benjamini-Hochberg step-up (the statsmodels multipletests
algorithms: sort, scale, running max / running min, cap at 1): the independent implementation the
SQL adjustment (sql/compare/adjusted_p.sql) is checked against. NaN or None: no test, left out of m."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np


def holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    out = np.empty(len(p))
    out[order] = np.minimum(np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)), 1.0)
    return out


def bh(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    scaled = p[order] / (np.arange(1, len(p) + 1) / len(p))
    out = np.empty(len(p))
    out[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return out


def adjust(p: Sequence[Optional[float]]) -> List[Tuple[int, Optional[float], Optional[float]]]:
    """Per member: (m, holm, bh), None for the untested ones."""
    tested = [i for i, v in enumerate(p) if v is not None and not math.isnan(v)]
    values = np.array([p[i] for i in tested], dtype=float)
    h, b = (holm(values), bh(values)) if tested else ([], [])
    out: List[Tuple[int, Optional[float], Optional[float]]] = [(len(tested), None, None)] * len(p)
    for j, i in enumerate(tested):
        out[i] = (len(tested), float(h[j]), float(b[j]))
    return out
