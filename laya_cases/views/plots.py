"""`plot RUN`: the reliability diagram and the risk-coverage curve of a report as PNG files.

Both draw numbers the report already computed in SQL (`extensions.*.reliability` and
`extensions.overall.risk_coverage`) with the one chart code (views/charts.py, also the HTML pages'
inline SVG). `report_figures` gives the same pictures as matplotlib figures (for a notebook), without
touching pyplot's backend or writing a file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.views import charts


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _groups(doc: Dict[str, Any], dim: Optional[str]):
    """(reliability bins by line label, ECE by line label) for the overall line or one line per group."""
    ext = doc["extensions"]
    run_id = ext["run"]["run_id"]
    if dim is None:
        groups = {"overall": ext["overall"].get("reliability", [])}
        eces = {"overall": doc["overall"].get("ece")}
    else:
        slices = ext["slices"].get(dim, {})
        groups = {"%s=%s" % (dim, k): v["reliability"] for k, v in sorted(slices.items()) if "reliability" in v}
        eces = {"%s=%s" % (dim, k): doc["slices"][dim][k].get("ece") for k in sorted(slices)}
    if not any(groups.values()):
        if dim is not None and ext["overall"].get("reliability"):
            raise UsageError("run %r has no %s group with paired cases to plot; drop --by or pick another "
                             "dimension" % (run_id, dim))
        raise UsageError("run %r has no paired cases (confidence and correctness) to plot" % run_id)
    return groups, eces


def report_figures(doc: Dict[str, Any], dim: Optional[str] = None, plt=None) -> Dict[str, Any]:
    """{"reliability": Figure, "risk_coverage": Figure} of a report document (overall, or one line per
    group of `dim`, and then "confidence": each group's confidence histogram): standalone figures, or
    pyplot ones when `plt` is given."""
    groups, eces = _groups(doc, dim)
    run_id, ext = doc["extensions"]["run"]["run_id"], doc["extensions"]
    out = {"reliability": charts.reliability(groups, eces, "Reliability, run %s" % run_id, plt),
           "risk_coverage": charts.risk_coverage({run_id: ext["overall"].get("risk_coverage", [])},
                                                 {run_id: doc["overall"].get("aurc")}, "Risk-coverage, run %s" % run_id,
                                                 plt)}
    if dim is not None and "confidence-%s" % dim in charts.report_chart_names(doc):
        out["confidence"] = charts.report_chart(doc, "confidence-%s" % dim, plt)
    return out


def plot_report(doc: Dict[str, Any], out_dir: Path, dim: Optional[str] = None) -> List[Path]:
    """Write reliability.png (overall, or one line per group of `dim`), risk_coverage.png and, with `dim`,
    confidence.png (a histogram per group)."""
    _groups(doc, dim)                    # refuse before making the directory
    plt = _pyplot()
    return charts.write_png(report_figures(doc, dim, plt), out_dir, plt)
