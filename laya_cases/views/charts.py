"""Every chart of laya-cases, drawn once (issue 32 item 5): matplotlib figures of numbers the SQL already
computed (a report's `extensions.*.reliability` and `risk_coverage`), written as PNG (`plot`) or as the
inline SVG of `report --html`, `diff --html` and `serve` (`svg`). One drawing code, so the PNG and the page
cannot disagree.

Readable by construction: the unit axes tick at 0, 0.2, ..., 1; count axes tick at integers only; bins with
fewer than 10 cases (the report's `too_small`, S9.4) are drawn hollow and left out of the line, so one-case
bins do not zig-zag it. Deterministic bytes: no date or software in the metadata, a fixed SVG id salt, text
kept as <text> (small, selectable).
"""
from __future__ import annotations

import io
import math
import re
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError

#: The SVG output settings: a fixed salt for element ids (else random) and text as text, not paths.
SVG_STYLE = {"svg.hashsalt": "laya-cases", "svg.fonttype": "none", "font.sans-serif": ["DejaVu Sans"]}
#: Line colours in order (matplotlib's tab10), so a run keeps its colour across the charts of one page.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
#: Panels of the per-group confidence histogram; larger groups first, the rest named in the title.
MAX_PANELS = 12
#: matplotlib is not thread-safe (not even its first import): a server draws one chart at a time.
DRAWING = threading.Lock()
_META = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_PATH = re.compile(r' d="[^"]*"')
_DIGITS = re.compile(r"(\d\.\d)\d+")
_INDENT = re.compile(r"\n[ ]+")


def figure(size, plt=None):
    """A standalone figure (no pyplot state), or a pyplot one when `plt` is given (notebooks)."""
    if plt is not None:
        return plt.figure(figsize=size)
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def svg(fig) -> str:
    """The figure as an inline <svg> element: no XML prolog, no metadata, the same bytes each time."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(SVG_STYLE):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = _META.sub("", text[text.index("<svg"):], count=1)
    # path coordinates to 0.1 pt (matplotlib writes 6 decimals): a third of the bytes, the same picture
    text = _PATH.sub(lambda m: _DIGITS.sub(r"\1", m.group(0)), text)
    return _INDENT.sub("\n", text).replace(" \nL ", " L ").replace("<svg ", '<svg class="chart" ', 1)


def png(fig, path) -> None:
    """Write the figure as a PNG with no timestamp (same bytes for the same run); one UsageError line."""
    try:
        fig.savefig(str(path), dpi=120, bbox_inches="tight", metadata={"Software": None})
    except OSError as exc:
        raise UsageError("cannot write %r: %s" % (str(path), exc)) from None


def _ok(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _unit(ax, axis: str = "x") -> None:
    """0 to 1 in steps of 0.2."""
    ticks = [i / 5 for i in range(6)]
    if axis == "x":
        ax.set_xlim(0, 1)
        ax.set_xticks(ticks, ["%.1f" % t for t in ticks])
    else:
        ax.set_ylim(0, 1.02)
        ax.set_yticks(ticks, ["%.1f" % t for t in ticks])


def _counts(ax) -> None:
    """Integer ticks only (no 2.5 cases)."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True, min_n_ticks=1))


def _hits(b: Dict[str, Any]) -> int:
    """A bin's correct cases: accuracy is hits / n_b exactly (sql/metrics/reliability.sql)."""
    return int(round(b["accuracy"] * b["n_b"])) if b.get("n_b") and _ok(b.get("accuracy")) else 0


def _shown(v: Optional[float]) -> str:
    return "n/a" if v is None or not _ok(v) else "%.4f" % v


def reliability(groups: Dict[str, List[Dict[str, Any]]], eces: Dict[str, Optional[float]], title: str, plt=None):
    """Accuracy per confidence bin against the diagonal, one line per group; bin counts below.
    Bins of fewer than 10 cases are hollow markers outside the line."""
    fig = figure((6, 6.5), plt)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    width = 1 / 15
    small = False
    for i, (label, bins) in enumerate(groups.items()):
        colour = COLOURS[i % len(COLOURS)]
        drawn = [b for b in bins if b.get("n_b") and _ok(b.get("mean_confidence")) and _ok(b.get("accuracy"))]
        hollow = [b for b in drawn if b.get("too_small")]
        small = small or bool(hollow)
        # the line joins only neighbouring bins of 10+ cases: a NaN (any other bin) breaks it
        line = [(b["mean_confidence"], b["accuracy"]) if b in drawn and not b.get("too_small") else (math.nan, math.nan)
                for b in bins]
        top.plot([x for x, _ in line], [y for _, y in line], marker="o", color=colour, linewidth=1.5,
                 label="%s (ECE %s)" % (label, _shown(eces.get(label))))
        if hollow:
            top.plot([b["mean_confidence"] for b in hollow], [b["accuracy"] for b in hollow], marker="o",
                     linestyle="none", markerfacecolor="none", color=colour)
        step = width / max(1, len(groups))
        offset = (i - (len(groups) - 1) / 2) * step
        bottom.bar([b["lower"] + width / 2 + offset for b in bins], [b["n_b"] for b in bins], width=step,
                   color=colour, alpha=0.7)
        if len(groups) == 1:
            for b in bins:
                if b["n_b"]:
                    bottom.annotate(str(b["n_b"]), (b["lower"] + width / 2, b["n_b"]), ha="center", va="bottom",
                                    fontsize=7)
    if small:
        top.plot([], [], marker="o", linestyle="none", markerfacecolor="none", color="0.3",
                 label="hollow: fewer than 10 cases (not joined)")
    top.set_ylabel("accuracy in bin")
    _unit(top, "y")
    top.set_title(title, fontsize=10)
    top.legend(loc="upper left", fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_xlabel("confidence (15 equal-width bins, S3.10)")
    bottom.set_ylabel("cases")
    bottom.margins(y=0.25)
    _counts(bottom)
    _unit(bottom, "x")
    return fig


def risk_coverage(curves: Dict[str, List[Dict[str, Any]]], aurcs: Dict[str, Optional[float]], title: str, plt=None):
    """Selective risk against coverage, one step line per run (a step per confidence level: ties are never
    split, S3.12), so compared runs overlay."""
    from matplotlib.ticker import MaxNLocator

    fig = figure((6, 4.5), plt)
    ax = fig.subplots()
    top = 0.05
    for i, (label, curve) in enumerate(curves.items()):
        pts = [p for p in curve if _ok(p.get("coverage")) and _ok(p.get("risk"))]
        if not pts:
            continue
        xs = [0.0] + [p["coverage"] for p in pts]
        ys = [pts[0]["risk"]] + [p["risk"] for p in pts]
        top = max([top] + ys)
        colour = COLOURS[i % len(COLOURS)]
        ax.step(xs, ys, where="pre", linewidth=1.5, color=colour, label="%s (AURC %s)" % (label, _shown(aurcs.get(label))))
    ax.set_xlabel("coverage (share of paired cases accepted)")
    ax.set_ylabel("risk (error rate of accepted cases)")
    _unit(ax, "x")
    ax.set_ylim(0, top * 1.1)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def confidence_histograms(groups: Dict[str, List[Dict[str, Any]]], title: str, plt=None):
    """One small histogram per group: its cases per confidence bin, right answers stacked under wrong ones.
    Up to MAX_PANELS groups, largest first (ties by name); the title says how many are left out."""
    sizes = {k: sum(b["n_b"] for b in bins) for k, bins in groups.items()}
    shown = sorted(groups, key=lambda k: (-sizes[k], k))[:MAX_PANELS]
    shown.sort()
    cols = min(4, max(1, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    fig = figure((2.4 * cols + 0.6, 1.9 * rows + 0.8), plt)
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    width = 1 / 15
    for ax, key in zip([a for row in axes for a in row], shown):
        bins = groups[key]
        filled = [b for b in bins if b["n_b"]]             # an empty bin draws nothing (and writes no path)
        xs = [b["lower"] + width / 2 for b in filled]
        right = [_hits(b) for b in filled]
        ax.bar(xs, right, width=width, color=COLOURS[2], label="right")
        ax.bar(xs, [b["n_b"] - r for b, r in zip(filled, right)], bottom=right, width=width, color=COLOURS[3],
               label="wrong")
        ax.set_title("%s (n=%d)" % (key, sizes[key]), fontsize=8)
        ax.tick_params(labelsize=7)
        _counts(ax)
        _unit(ax, "x")
    for ax in [a for row in axes for a in row][len(shown):]:
        ax.set_visible(False)
    left_out = len(groups) - len(shown)
    fig.suptitle(title + ("" if not left_out else " (the %d largest groups; %d more in the table)"
                          % (len(shown), left_out)), fontsize=10)
    axes[0][0].legend(loc="upper left", fontsize=7)
    fig.supxlabel("confidence", fontsize=8)
    fig.tight_layout()
    return fig


def write_png(figures: Dict[str, Any], out_dir: Path, plt=None) -> List[Path]:
    """Write each {stem: figure} as out_dir/stem.png (the directory made only now, so a refused plot
    leaves none behind)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("cannot create %r: %s" % (str(out_dir), exc)) from None
    written = []
    for name, fig in figures.items():
        written.append(out_dir / ("%s.png" % name))
        png(fig, written[-1])
        if plt is not None:
            plt.close(fig)
    return written


def run_figures(docs: Dict[str, Dict[str, Any]], plt=None) -> Dict[str, Any]:
    """{"reliability": ..., "risk_coverage": ...} of several runs' report documents, one line per run in the
    given order (`diff --html`, the serve compare pages)."""
    bins = {run: doc["extensions"]["overall"].get("reliability") or [] for run, doc in docs.items()}
    curves = {run: doc["extensions"]["overall"].get("risk_coverage") or [] for run, doc in docs.items()}
    names = " vs ".join(docs) if len(docs) <= 3 else "%d runs" % len(docs)
    return {"reliability": reliability(bins, {run: doc["overall"].get("ece") for run, doc in docs.items()},
                                       "Reliability, %s" % names, plt),
            "risk_coverage": risk_coverage(curves, {run: doc["overall"].get("aurc") for run, doc in docs.items()},
                                           "Risk-coverage, %s" % names, plt)}


def _slice_bins(doc: Dict[str, Any], dim: str) -> Dict[str, List[Dict[str, Any]]]:
    return {key: entry["reliability"] for key, entry in sorted(doc["extensions"]["slices"].get(dim, {}).items())
            if entry.get("reliability")}


def report_chart_names(doc: Dict[str, Any]) -> List[str]:
    """The charts a report page shows: the overall two when it has paired cases, and `confidence-DIM` for
    each slice dimension of two or more groups with paired cases (one group is the overall picture again)."""
    names = ["reliability", "risk_coverage"] if doc["extensions"]["overall"].get("reliability") else []
    return names + ["confidence-%s" % dim for dim in doc["slices"] if len(_slice_bins(doc, dim)) > 1]


def report_chart(doc: Dict[str, Any], name: str, plt=None):
    """One chart of a report page by its report_chart_names name."""
    ext, overall = doc["extensions"]["overall"], doc["overall"]
    if name == "reliability":
        return reliability({"overall": ext["reliability"]}, {"overall": overall.get("ece")}, "Reliability (overall)",
                           plt)
    if name == "risk_coverage":
        return risk_coverage({"overall": ext.get("risk_coverage") or []}, {"overall": overall.get("aurc")},
                             "Risk-coverage (overall)", plt)
    dim = name[len("confidence-"):]
    return confidence_histograms(_slice_bins(doc, dim), "Confidence by %s" % dim, plt)
