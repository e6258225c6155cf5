"""The verdict lines a gate prints (S6.3, S6.4, S6.6), one function per table of violation rows."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

from laya_cases.gates.inputs import SIGNIFICANT_AT

THRESHOLD_LINES = {
    "missing": lambda r: "metric %r is not in the report" % r["metric"],
    "nan": lambda r: "metric %r is NaN" % r["metric"],
    "below": lambda r: "%s=%.4f is below the minimum %.4f" % (r["metric"], r["value"], r["bound"]),
    "above": lambda r: "%s=%.4f is above the maximum %.4f" % (r["metric"], r["value"], r["bound"]),
}


def delta_lines(deltas: Sequence[Dict[str, Any]]) -> List[str]:
    """S6.4: one line per compared metric, sorted by metric."""
    lines = []
    for d in sorted(deltas, key=lambda r: r["metric"]):
        value = math.nan if d["value"] is None else d["value"]
        if d["status"] == "missing":
            lines.append("%-18s baseline=%.4f missing from the report" % (d["metric"], d["baseline"]))
        elif d["status"] == "incomparable":
            lines.append("%-18s baseline=%.4f value=%.4f not compared: %s" % (d["metric"], d["baseline"], value, d["reason"]))
        else:
            lines.append("%-18s baseline=%.4f value=%.4f diff=%+.4f (tol %.4f)"
                         % (d["metric"], d["baseline"], value, d["diff"], d["tolerance"]))
    return lines


def rule_line(row: Dict[str, Any], conflicts: Dict[int, str]) -> str:
    label = "slice gate rule %d (%s=%s, %s)" % (row["pos"], row["dim"], row["key"], row["metric"])
    failure = row["failure"]
    if failure == "missing":
        return "%s: metric or slice is missing" % label
    if failure == "count":
        return "%s: candidate count %d is below min_count %d" % (label, row["n"], row["min_count"])
    if failure in ("min", "max"):
        return "%s: candidate=%.4f (n=%d), %s=%.4f failed" % (label, row["current"], row["n"], failure, row["bound"])
    if failure == "coverage":
        return "%s: %s on a relative limit" % (label, conflicts[row["pos"]])
    if failure == "base_missing":
        return "%s: baseline metric or slice is missing" % label
    if failure == "base_count":
        return "%s: baseline count %d is below min_count %d" % (label, row["base_n"], row["min_count"])
    if failure == "unpaired":
        return ("%s: %s needs the two runs' cases paired by position, but %d position(s) differ"
                % (label, SIGNIFICANT_AT, row["unpaired"]))
    line = ("%s: candidate=%.4f (n=%d), baseline=%.4f (n=%d), %s=%.4f exceeded by %.4f"
            % (label, row["current"], row["n"], row["base_value"], row["base_n"], row["limit_name"], row["bound"],
               row["drift"] - row["bound"]))
    if failure == "significant":
        line += (" (McNemar p=%.4g < %s=%g; %d right->wrong, %d wrong->right)"
                 % (row["p_value"], SIGNIFICANT_AT, row["significant_at"], row["right_to_wrong"], row["wrong_to_right"]))
    return line
