"""A gate's verdict for CI: one check per rule (threshold, baseline metric, policy rule, identity), as JUnit
XML (`--junit FILE`), a Markdown summary (`--summary FILE`, e.g. "$GITHUB_STEP_SUMMARY") and the detail
lines under `FAIL: baseline comparison failed`.

Nothing here decides a verdict: every check is read from what the gate SQL already produced (the FAIL
lines, the delta rows, the policy measures), so a check fails exactly when a FAIL line says so, and the
bytes depend only on the verdict (no timestamps, no host names).
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Sequence
from xml.sax.saxutils import escape, quoteattr

from laya_cases.gates.messages import evidence_line

_THRESHOLD = re.compile(r"^(?:metric '(?P<quoted>.+)' is (?:not in the report|NaN)|(?P<metric>.+?)=\S+ is "
                        r"(?P<side>below the minimum|above the maximum) \S+)$")
_RULE = re.compile(r"^slice gate rule (\d+) ")


def _number(value: Any) -> str:
    return "missing" if value is None else ("NaN" if isinstance(value, float) and math.isnan(value) else "%.4f" % value)


def delta_detail(d: Dict[str, Any]) -> str:
    """One baseline metric outside its tolerance, in words: metric, value, baseline, diff, tolerance."""
    if d["status"] == "missing":
        return "%s: missing from the report (baseline %s)" % (d["metric"], _number(d["baseline"]))
    if d["status"] == "incomparable":
        return "%s: not compared: %s" % (d["metric"], d["reason"])
    diff, tolerance = (math.nan if d["diff"] is None else d["diff"]), d["tolerance"] or 0.0
    if "%.4f" % abs(diff) == "%.4f" % tolerance:      # T6.1: a binary64 boundary the 4 digits would hide
        return "%s: value %r, baseline %r, diff %r outside the tolerance %r" % (
            d["metric"], d["value"], d["baseline"], diff, tolerance)
    return "%s: value %s, baseline %s, diff %+.4f outside the tolerance %.4f" % (
        d["metric"], _number(d["value"]), _number(d["baseline"]), diff, tolerance)


def detail_lines(deltas: Sequence[Dict[str, Any]]) -> List[str]:
    """The failing baseline metrics, sorted as the delta lines are: printed under the FAIL line."""
    return ["  " + delta_detail(d) for d in sorted(deltas, key=lambda r: r["metric"]) if d["status"] != "pass"]


def checks(thresholds: Dict[str, Dict[str, float]], deltas: Sequence[Dict[str, Any]],
           measures: Sequence[Dict[str, Any]], failures: Sequence[str]) -> List[Dict[str, Any]]:
    """Every rule the gate judged, with ok and a one-line detail: {"kind", "name", "ok", "detail"}.
    A FAIL line no rule claims (an identity refusal, errored cases) is a failing check of its own."""
    left = list(failures)
    out: List[Dict[str, Any]] = []
    for kind, word in (("min", "minimum"), ("max", "maximum")):
        for metric, bound in (thresholds.get(kind) or {}).items():
            line = next((f for f in left if _claims(f, metric, word)), None)
            if line is not None:
                left.remove(line)
            out.append({"kind": "threshold", "name": "%s %s %.4f" % (metric, ">=" if kind == "min" else "<=", bound),
                        "ok": line is None, "detail": line or "%s within the %s %.4f" % (metric, word, bound)})
    for d in sorted(deltas, key=lambda r: r["metric"]):
        out.append({"kind": "baseline", "name": "baseline %s (tolerance %.4f)" % (d["metric"], d["tolerance"] or 0.0),
                    "ok": d["status"] == "pass", "detail": delta_detail(d) if d["status"] != "pass" else
                    "%s: value %s, baseline %s, within the tolerance" % (d["metric"], _number(d["value"]),
                                                                       _number(d["baseline"]))})
    if deltas and "baseline comparison failed" in left:
        left.remove("baseline comparison failed")
    for m in measures:
        line = next((f for f in left if _RULE.match(f) and int(_RULE.match(f).group(1)) == m["pos"]), None)
        if line is not None:
            left.remove(line)
        name = "policy rule %d (%s=%s, %s %s)" % (m["pos"], m["dim"], m["key"], m["metric"], m["limit_name"])
        if line is None and m.get("verdict") == "insufficient":      # on_insufficient: pass
            line_ok = evidence_line(m)
        else:
            line_ok = "%s: %s over %s cases" % (name, _number(m.get("current")), m.get("n"))
        out.append({"kind": "policy", "name": name, "ok": line is None, "detail": line or line_ok})
    out.extend({"kind": "gate", "name": line, "ok": False, "detail": line} for line in left)
    return out


def _claims(line: str, metric: str, word: str) -> bool:
    match = _THRESHOLD.match(line)
    if not match:
        return False
    if match.group("quoted") is not None:
        return match.group("quoted") == metric
    return match.group("metric") == metric and match.group("side").endswith(word)


def junit(checks_: Sequence[Dict[str, Any]], suite: str) -> str:
    """JUnit XML (the schema pytest writes): one testcase per check, a <failure> for each failing one."""
    failed = sum(not c["ok"] for c in checks_)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             "<testsuites>",
             '  <testsuite name=%s tests="%d" failures="%d" errors="0" skipped="0">'
             % (quoteattr(suite), len(checks_), failed)]
    for c in checks_:
        head = '    <testcase classname=%s name=%s' % (quoteattr("laya-cases." + c["kind"]), quoteattr(c["name"]))
        if c["ok"]:
            lines.append(head + " />")
        else:
            lines += [head + ">", '      <failure message=%s>%s</failure>' % (quoteattr(c["detail"]), escape(c["detail"])),
                      "    </testcase>"]
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def summary(checks_: Sequence[Dict[str, Any]], title: str) -> str:
    """Markdown for a CI job's summary: the verdict, then a row per check, failures first."""
    failed = [c for c in checks_ if not c["ok"]]
    verdict = "FAIL: %d of %d checks failed" % (len(failed), len(checks_)) if failed else \
        "pass: %d checks" % len(checks_)
    rows = ["| %s | %s | %s |" % ("FAIL" if not c["ok"] else "ok", _cell(c["name"]), _cell(c["detail"]))
            for c in sorted(checks_, key=lambda c: c["ok"])]
    return "\n".join(["### %s: %s" % (title, verdict), "", "| result | check | detail |", "|---|---|---|", *rows]) + "\n\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
