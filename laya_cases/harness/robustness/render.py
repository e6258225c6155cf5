"""The robustness document as terminal tables and Markdown (numbers at 4 decimals; the JSON has them all)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from laya_cases.harness.robustness.summary import GROUPS
from laya_cases.harness.robustness.variants import KINDS

_COLUMNS = (("n", "n"), ("agreement", "semantic_agreement_rate"), ("mean drift", "mean_probability_drift"),
            ("max drift", "max_probability_drift"), ("mean JS", "mean_js_divergence"),
            ("conf drift", "mean_confidence_drift"), ("abs conf drift", "mean_absolute_confidence_drift"),
            ("worst increase", "worst_confidence_increase_on_disagreement"))
_QUALITY = (("n_labelled", "n_labelled"), ("accuracy", "accuracy"), ("ece", "ece"))


def _value(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if name == "mean_confidence_drift":      # a drift that rounds to 0 prints +0.0000 whatever its last bits' sign
        return "%+.4f" % (value if round(value, 4) != 0 else 0.0)
    return "%.4f" % value


def _table(header: Sequence[str], rows: List[List[str]]) -> List[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)] if rows else [len(h) for h in header]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [fmt(list(header)), "─" * len(fmt(list(header)))]
    return lines + [fmt(r) for r in rows]


def _group_rows(summary: Dict[str, Any], lead: Optional[str] = None) -> List[List[str]]:
    rows = []
    for kind in GROUPS:
        g = summary.get(kind, {"n": 0})
        cells = [kind] + [_value(key, g.get(key)) for _, key in _COLUMNS]
        rows.append(([lead] if lead is not None else []) + cells)
    return rows


def _quality_rows(summary: Dict[str, Any], lead: Optional[str] = None) -> List[List[str]]:
    rows = []
    for kind in KINDS:
        q = summary.get("quality", {}).get(kind, {"n_labelled": 0})
        rows.append(([lead] if lead is not None else []) + [kind] + [_value(k, q.get(k)) for _, k in _QUALITY])
    return rows


def text_lines(doc: Dict[str, Any]) -> List[str]:
    lines = ["robustness run %s (seed %s): %d language(s), %d error record(s)%s"
             % (doc["run_id"], doc["seed"], len(doc["languages"]), doc["errors"],
                ", failed: " + ", ".join(doc["failed_languages"]) if doc["failed_languages"] else ""), ""]
    lines += _table(["group"] + [h for h, _ in _COLUMNS], _group_rows(doc["summary"])) + [""]
    lines += _table(["quality"] + [h for h, _ in _QUALITY], _quality_rows(doc["summary"]))
    if len(doc["languages"]) > 1 or doc["failed_languages"]:
        rows: List[List[str]] = []
        errors = []
        for lang, entry in sorted(doc["languages"].items()):
            if "error" in entry:
                errors.append("%s  error: %s" % (lang or "(none)", entry["error"]))
            else:
                rows += _group_rows(entry, lang or "(none)")
        lines += ["", "by language"] + _table(["language", "group"] + [h for h, _ in _COLUMNS], rows) + errors
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _md(header: Sequence[str], rows: List[List[str]]) -> List[str]:
    return (["| %s |" % " | ".join(header), "|%s" % ("---|" * len(header))]
            + ["| %s |" % " | ".join(_cell(c) for c in r) for r in rows])


def markdown(doc: Dict[str, Any]) -> str:
    lines = ["## Robustness: `%s` (seed %s)" % (_cell(doc["run_id"]), doc["seed"]), ""]
    lines += _md(["group"] + [h for h, _ in _COLUMNS], _group_rows(doc["summary"])) + [""]
    lines += _md(["quality"] + [h for h, _ in _QUALITY], _quality_rows(doc["summary"]))
    rows: List[List[str]] = []
    for lang, entry in sorted(doc["languages"].items()):
        if "error" in entry:
            rows.append([lang or "(none)", "error: %s" % entry["error"]] + [""] * len(_COLUMNS))
        else:
            rows += _group_rows(entry, lang or "(none)")
    lines += ["", "### by language", ""] + _md(["language", "group"] + [h for h, _ in _COLUMNS], rows)
    return "\n".join(lines) + "\n"
