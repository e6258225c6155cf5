"""The presentation verdict of a committed run, from the store alone (sql/presentation/, S7.10-S7.12).

`verdict(con, run_id)` returns the strict-JSON document the command prints and writes:

    {"run_id", "checks": {name: {"metric" (4 decimals), "value" (unrounded), "threshold", "passed"
     (decided on the unrounded value), "per_state", "leave_one_out": [min, max], "n_states",
     "n_decisions", "n_nan"}}, "parity": {"max_abs_diff", "tolerance", "n_decisions", "n_unchecked",
     "n_nan", "agrees"}, "exit": 0 | 1 | 2, "reasons": [...]}

Exit (S7.12): 2 when the harness path (softmax of the stored logits at the stored temperature)
disagrees with the runner's own probabilities by more than 1e-3, a difference is NaN, or a decision
cannot be checked; else 0 when every check passed, else 1. A NaN metric fails its check.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.presentation.constants import FIRST_SLOT, PARITY_TOLERANCE, SLOT0, THRESHOLDS


def _finite(x: Optional[float]) -> Optional[float]:
    """Strict JSON: NaN and infinities are written as null (their count is beside them)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _check(row: Dict[str, Any]) -> Dict[str, Any]:
    name, value = row["check_name"], row["metric"]
    threshold = THRESHOLDS[name]
    passed = value is not None and not math.isnan(value) and value >= threshold
    return {"metric": None if value is None or not math.isfinite(value) else round(value, 4),
            "value": _finite(value), "threshold": threshold, "passed": bool(passed),
            "per_state": [_finite(v) for v in row["per_state"]],
            "leave_one_out": [_finite(row["loo_min"]), _finite(row["loo_max"])],
            "n_states": row["n_states"], "n_decisions": row["n_decisions"], "n_nan": row["n_nan"]}


def _parity(row: Dict[str, Any]) -> Dict[str, Any]:
    diff = row["max_abs_diff"]
    agrees = (row["n_decisions"] > 0 and row["n_unchecked"] == 0 and row["n_nan"] == 0
              and diff is not None and not math.isnan(diff) and diff <= PARITY_TOLERANCE)
    return {"max_abs_diff": _finite(diff), "tolerance": PARITY_TOLERANCE, "n_decisions": row["n_decisions"],
            "n_unchecked": row["n_unchecked"], "n_nan": row["n_nan"], "agrees": bool(agrees)}


def verdict(con, run_id: str) -> Dict[str, Any]:
    checks = {r["check_name"]: _check(r)
              for r in sqlfiles.rows(sqlfiles.query(con, "presentation/checks.sql", {"run_id": run_id}))}
    if set(checks) != {SLOT0, FIRST_SLOT}:
        raise UsageError("run %r has no presentation decisions (make them with `laya-cases presentation --model M`)"
                         % run_id)
    parity = _parity(sqlfiles.rows(sqlfiles.query(con, "presentation/parity.sql", {"run_id": run_id}))[0])
    reasons: List[str] = []
    if not parity["agrees"]:
        reasons.append("the harness path disagrees with the runner's own probabilities: max |dp| %s > %g "
                       "(%d NaN, %d unchecked of %d decisions)"
                       % (parity["max_abs_diff"], PARITY_TOLERANCE, parity["n_nan"], parity["n_unchecked"],
                          parity["n_decisions"]))
    for name in (SLOT0, FIRST_SLOT):
        if not checks[name]["passed"]:
            reasons.append("%s %s < %g" % (name, checks[name]["metric"], checks[name]["threshold"]))
    code = 2 if not parity["agrees"] else (0 if all(c["passed"] for c in checks.values()) else 1)
    return {"run_id": run_id, "checks": {name: checks[name] for name in (SLOT0, FIRST_SLOT)}, "parity": parity,
            "exit": code, "reasons": reasons}
