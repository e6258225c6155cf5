"""The verdict lines a gate prints (S6.3, S6.4, S6.6), one function per table of violation rows."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

from laya_cases.gates.inputs import ON_INSUFFICIENT, SIGNIFICANT_AT

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


def _label(row: Dict[str, Any]) -> str:
    return "slice gate rule %d (%s=%s, %s)" % (row["pos"], row["dim"], row["key"], row["metric"])


def evidence_line(row: Dict[str, Any]) -> str:
    """A rule judged "insufficient" (policy_verdicts.sql): its interval, the bound, what the rule asked."""
    if row["ci_lower"] is None:
        why = "no bootstrap interval (fewer than 2 replicates drew a paired case)"
    else:
        why = ("the 95%% interval [%+.4f, %+.4f] of the delta (n=%d) reaches both -%.4f and +%.4f"
               % (row["ci_lower"], row["ci_upper"], row["n"], row["bound"], row["bound"]))
    return "%s: insufficient evidence: %s (%s: %s)" % (_label(row), why, ON_INSUFFICIENT, row["on_insufficient"])


def note_lines(measures: Sequence[Dict[str, Any]]) -> List[str]:
    """The rules judged "insufficient" that pass (on_insufficient: pass): said, never a failure."""
    return [evidence_line(m) for m in measures if m.get("verdict") == "insufficient" and m.get("failure") is None]


def rule_line(row: Dict[str, Any], conflicts: Dict[int, str]) -> str:
    label = _label(row)
    failure = row["failure"]
    if failure == "insufficient":
        return evidence_line(row)
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
    if failure == "significant" and row.get("adjust"):
        line += (" (%s p=%.4g < %s=%g; McNemar p=%.4g; %d right->wrong, %d wrong->right)"
                 % ({"holm": "Holm", "bh": "Benjamini-Hochberg"}[row["adjust"]], row["adjusted_p"], SIGNIFICANT_AT,
                    row["significant_at"], row["p_value"], row["right_to_wrong"], row["wrong_to_right"]))
    elif failure == "significant":
        line += (" (McNemar p=%.4g < %s=%g; %d right->wrong, %d wrong->right)"
                 % (row["p_value"], SIGNIFICANT_AT, row["significant_at"], row["right_to_wrong"], row["wrong_to_right"]))
    return line
