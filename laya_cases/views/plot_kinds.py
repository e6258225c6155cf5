"""More pictures of a committed run (`laya-cases plot RUN --kind ...`), each from the store's SQL, no model.

* `languages`: accuracy per language with the report's 95% bootstrap percentile interval (S9.5), and
  ECE per language beside it (the report gives ECE no interval, so its bars have none); the numbers
  are the report's (`R.build` with `bootstrap=B`, `seed`).
* `shortlist`: recall@k over k = 1..K of a shortlist run, from the stored `shortlist_labels` (rank
  order) and the gold label (sql/shortlist/recall_curve.sql); the point at the run's k is its
  `shortlist_recall_at_k`.
* `robustness`: semantic agreement per transform (option_order, label_rename) and language of a
  robustness run (laya_cases.harness.robustness.summary: sql/robustness/).

Every figure is drawn with fixed sizes, fonts and no timestamp in the PNG, so the bytes are the same
each time for the same run (views/charts.py, the one chart code).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from laya_cases.core.errors import UsageError, shorten
from laya_cases.harness.robustness.summary import summarize
from laya_cases.report import build as R
from laya_cases.query import sql as sqlfiles
from laya_cases.query.sql import connect
from laya_cases.views import charts
from laya_cases.views.plots import _pyplot

KINDS = ("calibration", "languages", "shortlist", "robustness")


def _accuracy_name(doc: Dict[str, Any]) -> str:
    overall = doc["overall"]
    for name in ("choice_accuracy", "noul_accuracy"):
        if name in overall:
            return name
    raise UsageError("run %s has no choice or noul accuracy to plot" % shorten(repr(doc["extensions"]["run"]["run_id"])))


def languages_figure(doc: Dict[str, Any], plt=None):
    """Two panels, one bar per language: accuracy with its interval, ECE."""
    run_id = doc["extensions"]["run"]["run_id"]
    groups = doc["slices"].get("language", {})
    if not groups:
        raise UsageError("run %s has no language slices to plot" % shorten(repr(run_id)))
    metric = _accuracy_name(doc)
    langs = sorted(groups)
    counts = doc["extensions"]["slices"]["language"]
    fig = charts.figure((max(6.0, 0.7 * len(langs) + 2), 6.5), plt)
    top, bottom = fig.subplots(2, 1, sharex=True)
    xs = list(range(len(langs)))
    acc = [groups[l].get(metric, float("nan")) for l in langs]
    lower, upper = [], []
    for l, a in zip(langs, acc):
        ci = counts[l].get(metric, {}).get("ci") if isinstance(counts[l].get(metric), dict) else None
        lower.append(a - ci["lower"] if ci else 0.0)
        upper.append(ci["upper"] - a if ci else 0.0)
    top.bar(xs, acc, color="tab:blue", yerr=[lower, upper], capsize=3, ecolor="0.2")
    top.set_ylabel("%s\n(bar: 95%% bootstrap interval)" % metric)
    top.set_ylim(0, 1.05)
    top.grid(axis="y", alpha=0.3)
    top.set_title("%s and ECE by language, run %s" % (metric, run_id))
    bottom.bar(xs, [groups[l].get("ece", float("nan")) for l in langs], color="tab:orange")
    bottom.set_ylabel("ECE (15 bins)")
    bottom.grid(axis="y", alpha=0.3)
    bottom.set_xticks(xs)
    bottom.set_xticklabels(["%s\nn=%d" % (l, counts[l]["n_cases"]) for l in langs], fontsize=8)
    return fig


def recall_curve(con, run_id: str) -> List[Dict[str, Any]]:
    return sqlfiles.rows(sqlfiles.query(con, "shortlist/recall_curve.sql", {"run_id": run_id}))


def shortlist_figure(doc: Dict[str, Any], curve: List[Dict[str, Any]], plt=None):
    """recall@k against k, the run's own k marked."""
    run_id = doc["extensions"]["run"]["run_id"]
    block = doc["config"].get("shortlist")
    if not isinstance(block, dict) or not curve:
        raise UsageError("run %s is not a shortlist run (make one with `laya-cases shortlist`)" % shorten(repr(run_id)))
    fig = charts.figure((6, 4.5), plt)
    ax = fig.subplots()
    ks = [p["k"] for p in curve]
    ax.plot(ks, [p["recall"] for p in curve], marker="o", markersize=3, linewidth=1.5, label="recall@k")
    at = doc["overall"].get("shortlist_recall_at_k")
    if at is not None:
        ax.scatter([block["k"]], [at], color="tab:red", zorder=3,
                   label="the run's k = %d: %.4f" % (block["k"], at))
    ax.set_xlabel("k (labels kept, rank order of the embedder's cosine)")
    ax.set_ylabel("recall@k (share of cases whose gold is kept)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0.5, max(ks) + 0.5)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Shortlist recall@k, run %s (%d cases, embedder %s)"
                 % (run_id, curve[0]["n"], block.get("embedder_id")), fontsize=9)
    return fig


def robustness_figure(summary: Dict[str, Any], plt=None):
    """Grouped bars: semantic agreement per transform, for all languages and each language."""
    names = ["all"] + sorted(summary["languages"])
    rows = [summary["summary"]] + [summary["languages"][n] for n in names[1:]]
    fig = charts.figure((max(6.0, 0.9 * len(names) + 2), 4.5), plt)
    ax = fig.subplots()
    width = 0.38
    for i, kind in enumerate(("option_order", "label_rename")):
        xs = [j + (i - 0.5) * width for j in range(len(names))]
        ys = [r.get(kind, {}).get("semantic_agreement_rate", 0.0) if "error" not in r else 0.0 for r in rows]
        ax.bar(xs, ys, width=width, label=kind)
    ax.set_xticks(list(range(len(names))))
    ax.set_xticklabels(["%s\n%s" % (n, "error" if "error" in r else "%d pairs" % r.get("overall", {}).get("n", 0))
                        for n, r in zip(names, rows)], fontsize=8)
    ax.set_ylabel("semantic agreement rate (pairs)")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8)
    ax.set_title("Agreement with the baseline per transform and language, run %s" % summary["run_id"], fontsize=9)
    return fig


def figures(wh, run_id: str, kind: str, bootstrap: int = 1000, seed: int = 0, plt=None) -> Dict[str, Any]:
    """{file stem: figure} of one extra kind for a committed run."""
    if kind == "languages":
        doc = R.build(connect(wh, [run_id]), run_id, R.Options(include_cases=False, bootstrap=bootstrap, seed=seed))
        return {"languages": languages_figure(doc, plt)}
    if kind == "shortlist":
        con = connect(wh, [run_id])
        doc = R.build(con, run_id, R.Options(include_cases=False))
        return {"shortlist_recall": shortlist_figure(doc, recall_curve(con, run_id), plt)}
    if kind == "robustness":
        return {"robustness_agreement": robustness_figure(summarize(connect(wh, [run_id], variants=True), run_id),
                                                          plt)}
    raise UsageError("--kind must be one of %s, got %s" % (", ".join(KINDS), shorten(repr(kind))))


def plot_kind(wh, run_id: str, kind: str, out_dir: Path, bootstrap: int = 1000) -> List[Path]:
    """Write the PNG(s) of one `--kind` other than calibration."""
    plt = _pyplot()
    figs = figures(wh, run_id, kind, bootstrap=bootstrap, plt=plt)      # refused before the directory exists
    return charts.write_png(figs, out_dir, plt)
