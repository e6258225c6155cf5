"""Robustness across runs: per kind (and per language), agreement and drift of run A, of run B, and B - A.

`laya-cases diff A B` adds this block (`robustness` in its JSON, a table in its text) when both runs are
robustness runs; the case-level diff above it compares their baseline rows, as for any two runs.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from laya_cases.report.diff import DiffBlock
from laya_cases.harness.robustness.summary import GROUPS, summarize
from laya_cases.query.sql import connect

FIELDS = ("semantic_agreement_rate", "mean_probability_drift", "max_probability_drift", "mean_js_divergence",
          "mean_confidence_drift", "mean_absolute_confidence_drift", "worst_confidence_increase_on_disagreement")


def _side(group: Dict[str, Any]) -> Dict[str, Any]:
    return {name: group.get(name) for name in ("n",) + FIELDS}


def _kinds(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for kind in GROUPS:
        ga, gb = _side(a.get(kind, {"n": 0})), _side(b.get(kind, {"n": 0}))
        delta = {name: (gb[name] - ga[name] if ga[name] is not None and gb[name] is not None else None)
                 for name in FIELDS}
        out[kind] = {"a": ga, "b": gb, "delta": delta}
    return out


def robustness_diff(wh, con, run_a: str, run_b: str) -> Optional[Dict[str, Any]]:
    """The block, or None unless both runs are robustness runs (`con` holds both in its `runs` view)."""
    kinds = dict(con.execute("SELECT run_id, kind FROM runs").fetchall())
    if kinds.get(run_a) != "robustness" or kinds.get(run_b) != "robustness":
        return None
    doc_a = summarize(connect(wh, [run_a], variants=True), run_a)
    doc_b = summarize(connect(wh, [run_b], variants=True), run_b)
    languages = {}
    for lang in sorted(set(doc_a["languages"]) & set(doc_b["languages"])):
        la, lb = doc_a["languages"][lang], doc_b["languages"][lang]
        if "error" not in la and "error" not in lb:
            languages[lang] = _kinds(la, lb)
    return {"seed_a": doc_a["seed"], "seed_b": doc_b["seed"], "summary": _kinds(doc_a["summary"], doc_b["summary"]),
            "languages": languages,
            "failed_languages_a": doc_a["failed_languages"], "failed_languages_b": doc_b["failed_languages"]}


def _f(value: Optional[float], fmt: str = "%.4f") -> str:
    return "-" if value is None else fmt % value


def text_lines(block: Dict[str, Any]) -> List[str]:
    lines = ["robustness (seed A=%s B=%s): agreement and drift per kind, B - A" % (block["seed_a"], block["seed_b"])]
    rows = [("", block["summary"])] + sorted(block["languages"].items())
    for lang, kinds in rows:
        for kind in GROUPS:
            k = kinds[kind]
            lines.append("  %s%-12s n=%s/%s agreement A=%s B=%s delta=%s  mean drift A=%s B=%s delta=%s  "
                         "mean JS delta=%s" % (
                             "language=%s " % lang if lang else "", kind, k["a"]["n"], k["b"]["n"],
                             _f(k["a"]["semantic_agreement_rate"]), _f(k["b"]["semantic_agreement_rate"]),
                             _f(k["delta"]["semantic_agreement_rate"], "%+.4f"),
                             _f(k["a"]["mean_probability_drift"]), _f(k["b"]["mean_probability_drift"]),
                             _f(k["delta"]["mean_probability_drift"], "%+.4f"),
                             _f(k["delta"]["mean_js_divergence"], "%+.4f")))
    return lines


def markdown_lines(block: Dict[str, Any]) -> List[str]:
    lines = ["", "### robustness (B - A)", "",
             "| language | kind | n A | n B | agreement A | agreement B | delta | mean drift A | mean drift B | delta |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for lang, kinds in [("all", block["summary"])] + sorted(block["languages"].items()):
        for kind in GROUPS:
            k = kinds[kind]
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                lang or "(none)", kind, k["a"]["n"], k["b"]["n"], _f(k["a"]["semantic_agreement_rate"]),
                _f(k["b"]["semantic_agreement_rate"]), _f(k["delta"]["semantic_agreement_rate"], "%+.4f"),
                _f(k["a"]["mean_probability_drift"]), _f(k["b"]["mean_probability_drift"]),
                _f(k["delta"]["mean_probability_drift"], "%+.4f")))
    return lines


#: The robustness section of `diff A B` when both are robustness runs (harness/diff_blocks.py).
DIFF_BLOCK = DiffBlock("robustness", robustness_diff, text_lines, markdown_lines)
