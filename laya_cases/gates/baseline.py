"""The baseline comparison (S6.4): the candidate's overall metrics against a baseline document's."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import duckdb
import pyarrow as pa

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import catalogue
from laya_cases.query import sql as sqlfiles
from laya_cases.gates.documents import coverage_definition_conflict, named, source_of
from laya_cases.gates.tables import number, register
from laya_cases.query.reference_order import FUNCTIONS, reference_order_values


def metric_map(values: Any, label: str, *, allow_empty: bool = False) -> Dict[str, Any]:
    """S6.4 step 2: an object of numbers (bools refused); empty only on the candidate's side."""
    if not isinstance(values, dict):
        raise UsageError("%s metrics must be an object of metric name to number, got %s" % (label, type(values).__name__))
    if not values and not allow_empty:
        raise UsageError("%s has no metrics to compare, so nothing in it could fail" % label)
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError("%s metric %s is not a number, got %s" % (label, shorten(repr(name)), type(value).__name__))
    return values


def check_baseline(baseline: Any) -> Dict[str, Any]:
    """S6.4 steps 1-2, as soon as the baseline is read (before a run is committed); the message names
    the baseline's file or run: `report.json: baseline metric 'x' is not a number, got str`."""
    if not isinstance(baseline, dict):
        raise UsageError("baseline report must be a JSON object, got %s" % type(baseline).__name__)
    try:
        metric_map(baseline.get("overall", baseline), "baseline")
    except UsageError as exc:
        raise UsageError(named(source_of(baseline), str(exc))) from None
    return baseline


def check_report(document: Any) -> Dict[str, Any]:
    """A saved candidate report (S6.9): its `overall`, if any, is an object of numbers; named like a baseline."""
    try:
        metric_map(document.get("overall", {}), "report", allow_empty=True)
    except UsageError as exc:
        raise UsageError(named(source_of(document), str(exc))) from None
    return document


def tolerance_map(tolerances: Any) -> Dict[str, Any]:
    """S6.4 step 3: numbers; +inf refused; NaN and negatives accepted (they always fail)."""
    if tolerances is None:
        return {}
    if not isinstance(tolerances, dict):
        raise UsageError("tolerances must be an object of metric name to number, got %s" % type(tolerances).__name__)
    for name, value in tolerances.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError("tolerance for %s is not a number, got %s" % (shorten(repr(name)), type(value).__name__))
        if math.isinf(value) and value > 0:
            raise UsageError("tolerance for %s is Infinity, so it accepts a drift of any size" % shorten(repr(name)))
    return tolerances


def order_dependent() -> Tuple[str, ...]:
    """The metrics the reference sums in case order (`-- order_dependent: yes`), that we can re-sum so."""
    return tuple(m for m in catalogue.order_dependent() if m in FUNCTIONS)


def written_by_reference(baseline: Any) -> bool:
    """A report laya-cases writes always has `extensions` (S9.1); laya-evals' and bare maps never do."""
    return isinstance(baseline, dict) and "extensions" not in baseline


def compare(con: duckdb.DuckDBPyConnection, config: Dict[str, Any], overall: Any, baseline: Any,
            tolerances: Optional[Dict[str, float]],
            cases: Optional[Sequence[Dict[str, Any]]] = None,
            candidate_by_reference: bool = False) -> Tuple[bool, List[Dict[str, Any]]]:
    """S6.4 over `gate_metrics` (candidate side): (ok, delta rows sorted by metric).

    When one side was written by the reference and the other by us, our side's ece/brier/aurc are read
    in the reference's summation order (`reference_order_values`, from that side's cases), so unchanged
    answers compare exactly in either direction: the candidate's against a reference baseline, the
    baseline's when the candidate (`candidate_by_reference`) is the reference's report."""
    check_baseline(baseline)
    ref: Dict[str, float] = {}
    if written_by_reference(baseline) and not candidate_by_reference and isinstance(overall, dict) \
            and any(m in overall for m in order_dependent()):
        ref = {m: v for m, v in reference_order_values(cases).items() if m in overall}
    register(con, "cmp_reference_order", {"metric": (pa.string(), list(ref)),
                                           "value": (pa.float64(), list(ref.values()))})
    base = baseline.get("overall", baseline)
    if candidate_by_reference and not written_by_reference(baseline) and isinstance(base, dict):
        base = dict(base, **{m: v for m, v in reference_order_values(baseline.get("cases")).items() if m in base})
    metric_map(overall, "report", allow_empty=True)
    tolerances = tolerance_map(tolerances)
    register(con, "cmp_baseline", {"pos": (pa.int64(), list(range(1, len(base) + 1))),
                                    "metric": (pa.string(), list(base)),
                                    "coverage_metric": (pa.bool_(), [catalogue.is_coverage_metric(m) for m in base]),
                                    "value": (pa.float64(), [number(v) for v in base.values()])})
    register(con, "cmp_tolerances", {"metric": (pa.string(), list(tolerances)),
                                      "tolerance": (pa.float64(), [float(v) for v in tolerances.values()])})
    rows = sqlfiles.rows(sqlfiles.query(con, "compare/overall_deltas.sql",
                          {"coverage_conflict": coverage_definition_conflict(config, baseline)}))
    return all(r["status"] == "pass" for r in rows), rows
