"""Pictures where a picture beats a table: the reliability diagram and the risk-coverage curve.

Both draw numbers the report already computed in SQL (`extensions.*.reliability` and
`extensions.overall.risk_coverage`); nothing is recomputed here. PNG output is deterministic for a
fixed run (no timestamps in the metadata). `report_figures` gives the same pictures as matplotlib
figures (for a notebook), without touching pyplot's backend or writing a file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    try:
        fig.savefig(str(path), dpi=120, bbox_inches="tight", metadata={"Software": None})
    except OSError as exc:
        raise UsageError("cannot write %r: %s" % (str(path), exc)) from None


def _figure(size, plt=None):
    """A pyplot figure (for a PNG, as before) or a standalone one (returned to the caller)."""
    if plt is not None:
        return plt.figure(figsize=size)
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def reliability_figure(groups: Dict[str, List[Dict[str, Any]]], eces: Dict[str, Optional[float]], title: str,
                       plt=None):
    """One reliability diagram: accuracy per confidence bin against the diagonal, bin counts below."""
    fig = _figure((6, 6.5), plt)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    width = 1 / 15
    for i, (label, bins) in enumerate(groups.items()):
        filled = [b for b in bins if b["n_b"]]
        xs = [b["mean_confidence"] for b in filled]
        ys = [b["accuracy"] for b in filled]
        ece = eces.get(label)
        top.plot(xs, ys, marker="o", linewidth=1.5,
                 label="%s (ECE %s)" % (label, "n/a" if ece is None else "%.4f" % ece))
        offset = (i - (len(groups) - 1) / 2) * width / max(1, len(groups))
        bottom.bar([b["lower"] + width / 2 + offset for b in bins], [b["n_b"] for b in bins],
                   width=width / max(1, len(groups)), alpha=0.7)
    top.set_ylabel("accuracy in bin")
    top.set_ylim(0, 1.02)
    top.set_title(title)
    top.legend(loc="upper left", fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_xlabel("confidence (15 equal-width bins, S3.10)")
    bottom.set_ylabel("cases")
    bottom.set_xlim(0, 1)
    return fig


def risk_coverage_figure(curve: List[Dict[str, Any]], aurc: Optional[float], title: str, plt=None):
    """Selective risk against coverage, one point per confidence level (ties never split, S3.12)."""
    fig = _figure((6, 4.5), plt)
    ax = fig.subplots()
    xs = [0.0] + [p["coverage"] for p in curve]
    ys = [curve[0]["risk"] if curve else 0.0] + [p["risk"] for p in curve]
    ax.step(xs, ys, where="pre", linewidth=1.5, label="risk (AURC %s)" % ("n/a" if aurc is None else "%.4f" % aurc))
    ax.fill_between(xs, ys, step="pre", alpha=0.15)
    ax.set_xlabel("coverage (share of paired cases accepted)")
    ax.set_ylabel("risk (error rate of accepted cases)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max([0.05] + ys) * 1.1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return fig


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
    group of `dim`): standalone figures, or pyplot ones when `plt` is given."""
    groups, eces = _groups(doc, dim)
    run_id, ext = doc["extensions"]["run"]["run_id"], doc["extensions"]
    return {"reliability": reliability_figure(groups, eces, "Reliability, run %s" % run_id, plt),
            "risk_coverage": risk_coverage_figure(ext["overall"].get("risk_coverage", []), doc["overall"].get("aurc"),
                                                  "Risk-coverage, run %s" % run_id, plt)}


def plot_report(doc: Dict[str, Any], out_dir: Path, dim: Optional[str] = None) -> List[Path]:
    """Write reliability.png (overall, or one line per group of `dim`) and risk_coverage.png."""
    _groups(doc, dim)                    # refuse before making the directory
    try:                                 # only now: a refused plot leaves no directory behind
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("cannot create %r: %s" % (str(out_dir), exc)) from None
    plt = _pyplot()
    written = []
    for name, fig in report_figures(doc, dim, plt).items():
        written.append(out_dir / ("%s.png" % name))
        _save(fig, written[-1])
        plt.close(fig)
    return written
