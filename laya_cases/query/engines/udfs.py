"""Functions Spark SQL lacks, registered as UDFs on every session (laya_cases/query/engines/spark.py).

Each computes what DuckDB computes for the same SQL, with the same C library calls, so both engines
give the same bits. Pickled by value: executors need Python and pyspark, not laya-cases.
"""
from __future__ import annotations

import math
from typing import Optional


def binomial_terms(n: Optional[int], m: Optional[int]) -> Optional[float]:
    """sum(exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) - n * ln(2.0))) over k = 0..m, added in
    k order: the n > 33 branch of sql/macros/mcnemar_exact.sql. lgamma is the C library's (DuckDB
    calls std::lgamma; CPython's math.lgamma is its own approximation). None below n = 34 (Spark
    computes a Python UDF on every row, whichever CASE branch is taken)."""
    import ctypes
    import ctypes.util

    if n is None or m is None or n <= 33:
        return None
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.lgamma.restype = ctypes.c_double
    libm.lgamma.argtypes = [ctypes.c_double]
    log2 = math.log(2.0)
    head = libm.lgamma(float(n + 1))
    total = 0.0
    for k in range(m + 1):
        total += math.exp(head - libm.lgamma(float(k + 1)) - libm.lgamma(float(n - k + 1)) - float(n) * log2)
    return total
