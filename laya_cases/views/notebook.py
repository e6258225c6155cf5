"""What a notebook reads from a warehouse: the work behind laya_cases.api.Store's methods (docs/python.md).

Tables come back as polars frames, reports and diffs as the dicts the CLI writes as JSON, plots as
matplotlib figures; a duckdb error is a one-line UsageError. api.py imports this module on a Store's
first query (cases() reads with polars alone, in api.py), so `import laya_cases` and `lc.open` load no
engine; polars and matplotlib load here only when a frame or a figure is asked for.
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Sequence

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.harness.diff_blocks import DIFF_BLOCKS
from laya_cases.query.guard import check_query
from laya_cases.query.sql import connect
from laya_cases.report import build as R
from laya_cases.report import diff as D
from laya_cases.views.plots import report_figures

#: warnings.warn's stacklevel that names the caller of a Store method (this module, then api.Store)
_CALLER = 4


def runs(wh):
    return _frame(_connect(wh), "SELECT * FROM runs ORDER BY created_at, run_id")


def report(wh, run: str, slices: Optional[Sequence[str]], bootstrap: int, seed: int,
           score_within: Sequence[float], coverages: Sequence[float], thresholds: Sequence[float]) -> Dict[str, Any]:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError("seed must be a non-negative integer, got %r" % (seed,))
    dims = list(R.DIMENSIONS if slices is None else ([slices] if isinstance(slices, str) else slices))
    for dim in dims:
        if dim not in R.DIMENSIONS:
            raise UsageError("slices must name %s, got %r" % (", ".join(R.DIMENSIONS), dim))
    options = R.Options(score_within=[R.check_tolerance(t) for t in score_within],
                        coverages=[R.check_coverage(c) for c in coverages],
                        thresholds=[R.check_threshold(t) for t in thresholds], include_cases=False,
                        bootstrap=R.check_bootstrap(bootstrap), seed=seed)
    doc = _build(wh, run, options)
    doc.pop("cases", None)
    for part in (doc["slices"], doc["extensions"]["slices"]):
        for dim in [d for d in part if d not in dims]:
            del part[dim]
    return doc


def diff(wh, a: str, b: str, by: Optional[str], bootstrap: int, seed: int) -> Dict[str, Any]:
    return _guard(lambda: D.diff(wh, a, b, by=by, bootstrap=bootstrap, seed=seed, blocks=DIFF_BLOCKS), a, b)


def plot(wh, run: str, by: Optional[str]) -> Dict[str, Any]:
    if by is not None and by not in R.DIMENSIONS:
        raise UsageError("by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
    return report_figures(_build(wh, run, R.Options(include_cases=False)), by)


def sql(wh, query: str):
    text = check_query(query, wh.root)          # the read, wrapped so that nothing else can run
    con = _connect(wh)
    return _guard(lambda: _frame(con, text))


# ---------------------------------------------------------------------------------------------- helpers
def _connect(wh):
    wh.damaged.clear()
    con = connect(wh)
    for rid, problem in sorted(wh.damaged.items()):
        warnings.warn("run %r is damaged and left out: %s" % (rid, problem), stacklevel=_CALLER)
    return con


def _build(wh, run: str, options) -> Dict[str, Any]:
    wh.require_run(run)
    return _guard(lambda: R.build(connect(wh, [run]), run, options), run)


def _guard(call, *run_ids: str):
    """duckdb errors (a page that does not decode, a bad query) as one-line UsageErrors."""
    try:
        return call()
    except duckdb.Error as exc:
        what = "cannot read run %s" % " / ".join(repr(r) for r in run_ids) if run_ids else "query failed"
        raise UsageError("%s: %s" % (what, str(exc).splitlines()[0])) from None


def _frame(con, query: str):
    import polars as pl

    return pl.from_arrow(con.sql(query).to_arrow_table())
