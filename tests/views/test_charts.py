"""The one chart code (views/charts.py, issue 32 item 5): what each chart draws is read back from the
matplotlib figure and checked against the report's own numbers; ticks are readable; the SVG is inline and
byte-stable; report --html, diff --html and serve's compare pages carry the charts."""
from __future__ import annotations

import math
import re
import sys

import numpy as np
import pytest
from starlette.testclient import TestClient

from helpers import ROOT
from laya_cases.query.sql import connect
from laya_cases.report import build as R
from laya_cases.store.warehouse import Warehouse
from laya_cases.views import charts
from laya_cases.views.html import files
from laya_cases.views.serve.app import build as serve_app

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # noqa: E402

LANGS = 6


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """Two synthetic runs of 300 decisions (6 languages, beta(5, 2) confidences: the low bins have few
    cases, the high ones many)."""
    store = Warehouse(tmp_path_factory.mktemp("charts") / "wh")
    synthetic.write_run(store, "a", synthetic.decisions(300, seed=1))
    synthetic.write_run(store, "b", synthetic.decisions(300, seed=2, distinct=True))
    return store


@pytest.fixture(scope="module")
def docs(wh):
    return files.run_docs(wh, ["a", "b"])


def _lines(ax):
    """(solid line, hollow markers) per group of a reliability axis, skipping the diagonal."""
    drawn = [line for line in ax.get_lines() if line.get_label() != "perfect calibration"]
    return [line for line in drawn if line.get_markerfacecolor() != "none"], \
        [line for line in drawn if line.get_markerfacecolor() == "none" and len(line.get_xdata())]


def test_reliability_draws_every_bin_and_leaves_small_ones_hollow_and_unjoined(docs):
    bins = docs["a"]["extensions"]["overall"]["reliability"]
    assert any(b["too_small"] and b["n_b"] for b in bins) and any(not b["too_small"] for b in bins)
    fig = charts.reliability({"overall": bins}, {"overall": docs["a"]["overall"]["ece"]}, "t")
    top, bottom = fig.axes
    (solid,), (hollow,) = _lines(top)
    ys = list(solid.get_ydata())
    assert len(ys) == 15
    for b, y in zip(bins, ys):
        if b["n_b"] and not b["too_small"]:
            assert y == b["accuracy"]
        else:
            assert math.isnan(y)                  # a break in the line: small and empty bins are never joined
    small = [b for b in bins if b["n_b"] and b["too_small"]]
    assert list(hollow.get_xdata()) == [b["mean_confidence"] for b in small]
    assert list(hollow.get_ydata()) == [b["accuracy"] for b in small]
    assert [p.get_height() for p in bottom.patches] == [b["n_b"] for b in bins]
    assert sorted(t.get_text() for t in bottom.texts) == sorted(str(b["n_b"]) for b in bins if b["n_b"])


def test_ticks_are_readable(docs):
    figs = charts.run_figures(docs)
    top, bottom = figs["reliability"].axes
    (rc,) = figs["risk_coverage"].axes
    unit = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert list(bottom.get_xticks()) == pytest.approx(unit) and list(top.get_yticks()) == pytest.approx(unit)
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    for ax in (bottom, rc):
        ax.figure.canvas.draw()
    counts = [t for t in bottom.get_yticks() if bottom.get_ylim()[0] <= t <= bottom.get_ylim()[1]]
    assert counts and all(float(t).is_integer() for t in counts)          # never 2.5 cases
    risks = [t for t in rc.get_yticks() if 0 <= t <= rc.get_ylim()[1]]
    assert 3 <= len(risks) <= 7 and all(len(("%.10g" % t).split(".")[-1]) <= 3 for t in risks)


def test_small_counts_still_tick_at_integers():
    """The issue's 48-case run: a count axis up to 9 ticked at 2.5 and 7.5 before."""
    bins = [{"bin": i, "lower": i / 15, "upper": (i + 1) / 15, "n_b": (9 if i == 14 else i % 4),
             "mean_confidence": (i + 0.5) / 15, "accuracy": 0.5, "too_small": True} for i in range(15)]
    fig = charts.reliability({"overall": bins}, {"overall": None}, "t")
    fig.canvas.draw()
    bottom = fig.axes[1]
    ticks = [t for t in bottom.get_yticks() if bottom.get_ylim()[0] <= t <= bottom.get_ylim()[1]]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)


def test_risk_coverage_overlays_one_step_line_per_run(docs):
    (ax,) = charts.run_figures(docs)["risk_coverage"].axes
    lines = ax.get_lines()
    assert [line.get_label().split(" ")[0] for line in lines] == ["a", "b"]
    for line, run in zip(lines, ("a", "b")):
        curve = docs[run]["extensions"]["overall"]["risk_coverage"]
        assert list(line.get_xdata()) == [0.0] + [p["coverage"] for p in curve]
        assert list(line.get_ydata())[1:] == [p["risk"] for p in curve]
        assert "%.4f" % docs[run]["overall"]["aurc"] in line.get_label()


def test_histograms_stack_right_under_wrong_per_bin(docs):
    groups = {k: v["reliability"] for k, v in docs["a"]["extensions"]["slices"]["language"].items()}
    assert len(groups) == LANGS
    fig = charts.confidence_histograms(groups, "t")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title().split(" ")[0] for ax in panels] == sorted(groups)
    for ax in panels:
        key = ax.get_title().split(" ")[0]
        bins = [b for b in groups[key] if b["n_b"]]               # an empty bin draws no bar
        half = len(ax.patches) // 2
        right, wrong = ax.patches[:half], ax.patches[half:]
        assert [r.get_x() + r.get_width() / 2 for r in right] == pytest.approx([b["lower"] + 1 / 30 for b in bins])
        assert [r.get_height() + w.get_height() for r, w in zip(right, wrong)] == [b["n_b"] for b in bins]
        assert [r.get_height() for r in right] == [round(b["accuracy"] * b["n_b"]) for b in bins]
        assert ax.get_title() == "%s (n=%d)" % (key, sum(b["n_b"] for b in bins))


def test_histograms_keep_the_largest_groups_and_say_so():
    bins = lambda n: [{"lower": i / 15, "n_b": n if i == 7 else 0, "accuracy": 1.0 if i == 7 else None} for i in range(15)]
    groups = {"g%02d" % i: bins(i + 1) for i in range(charts.MAX_PANELS + 3)}
    fig = charts.confidence_histograms(groups, "t")
    shown = [ax.get_title().split(" ")[0] for ax in fig.axes if ax.get_visible()]
    assert shown == sorted(groups)[3:]                   # the three smallest left out
    assert "3 more" in fig._suptitle.get_text()


def test_svg_is_inline_and_the_same_bytes_each_time(docs):
    one = charts.svg(charts.run_figures(docs)["reliability"])
    two = charts.svg(charts.run_figures(docs)["reliability"])
    assert one == two and one.startswith('<svg class="chart" ') and one.rstrip().endswith("</svg>")
    assert "<?xml" not in one and "<metadata" not in one and "<script" not in one.lower()
    assert ">a (ECE %.4f)<" % docs["a"]["overall"]["ece"] in one       # text stays text
    assert one != charts.svg(charts.run_figures({"b": docs["b"], "a": docs["a"]})["reliability"])


def test_report_html_has_a_histogram_per_sliced_dimension(wh, docs):
    text = files.report_html(docs["a"], files.case_summary(connect(wh, ["a"]), "a"))
    assert "Confidence by language" in text and "Confidence by model" in text
    assert len(re.findall(r"<svg ", text)) == 2 + len([d for d, g in docs["a"]["slices"].items() if len(g) > 1])


def test_diff_html_overlays_both_runs(wh, docs):
    from laya_cases.report.diff import diff
    text = files.diff_html(diff(wh, "a", "b", bootstrap=100), docs)
    block = text[text.index("Calibration of the runs"):]
    assert block.count("<svg ") == 2 and ">a (AURC " in block and ">b (AURC " in block
    assert text.index("Calibration of the runs") < text.index('class="flips"')


def test_serve_compare_pages_ask_for_the_charts_as_images(wh):
    client = TestClient(serve_app(wh))
    for url in ("/compare?runs=a,b", "/compare?a=a&b=b"):
        page = client.get(url)
        assert page.status_code == 200
        assert "img-src data: 'self'" in page.headers["content-security-policy"]
        srcs = re.findall(r'<img class="chart" src="([^"]+)"', page.text)
        assert sorted(s.split("?")[0] for s in srcs) == ["/compare/chart/reliability.svg", "/compare/chart/risk_coverage.svg"]
    got = client.get("/compare/chart/risk_coverage.svg?runs=a%2Cb")
    assert got.status_code == 200 and got.headers["content-type"].startswith("image/svg+xml")
    assert got.text.startswith("<svg ") and ">a (AURC " in got.text and ">b (AURC " in got.text
    assert got.text == client.get("/compare/chart/risk_coverage.svg?runs=a%2Cb").text
    for bad in ("/compare/chart/nope.svg?runs=a,b", "/compare/chart/reliability.svg?runs=a",
                "/compare/chart/reliability.svg?runs=a,b&x=1", "/compare/chart/reliability.svg?runs=a,zz"):
        assert client.get(bad).status_code == 400, bad


def test_the_hist_check_can_fail(docs):
    """The stacked-bar check reads the bars: a histogram of other groups' bins fails it."""
    groups = {k: v["reliability"] for k, v in docs["b"]["extensions"]["slices"]["language"].items()}
    mine = {k: v["reliability"] for k, v in docs["a"]["extensions"]["slices"]["language"].items()}
    ax = [a for a in charts.confidence_histograms(groups, "t").axes if a.get_visible()][0]
    key = ax.get_title().split(" ")[0]
    half = len(ax.patches) // 2
    heights = [r.get_height() + w.get_height() for r, w in zip(ax.patches[:half], ax.patches[half:])]
    assert heights != [b["n_b"] for b in mine[key] if b["n_b"]] and np.sum(heights) > 0


def test_plot_by_a_dimension_also_writes_the_histograms_png(docs, tmp_path):
    from laya_cases.views.plots import plot_report

    first = plot_report(docs["a"], tmp_path / "one", "language")
    assert [p.name for p in first] == ["reliability.png", "risk_coverage.png", "confidence.png"]
    again = plot_report(docs["a"], tmp_path / "two", "language")
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, again))
    assert [p.name for p in plot_report(docs["a"], tmp_path / "three")] == ["reliability.png", "risk_coverage.png"]


def test_charts_drawn_by_concurrent_requests_are_whole(wh):
    """The server draws charts from a thread pool; matplotlib is not thread-safe, so it draws one at a time
    (charts.DRAWING): eight requests at once give the bytes one request alone gives."""
    from concurrent.futures import ThreadPoolExecutor

    urls = ["/run/a/chart/%s.svg" % n for n in ("reliability", "risk_coverage", "confidence-language")] + \
        ["/compare/chart/%s.svg?runs=a%%2Cb" % n for n in ("reliability", "risk_coverage")]
    alone = {u: TestClient(serve_app(wh)).get(u).text for u in urls}
    client = TestClient(serve_app(wh))
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda u: (u, client.get(u)), urls * 2))
    for url, response in got:
        assert response.status_code == 200 and response.text == alone[url], url
