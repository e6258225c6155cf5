"""A report document (report.build) as HTML sections: identity, overall metrics with counts and
intervals, coverage cuts, the two plots, the reliability bins and every slice table. Used by the
self-contained file (`report --html`) and by the run page of `laya-cases serve`."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from laya_cases.views import charts
from laya_cases.views.html.markup import cell, esc, exact, link, num, shown, table


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _counts(entry: Any) -> str:
    """The counts beside a ratio (hits, n, N, ...), as `name value` pairs; the interval is its own column."""
    if not isinstance(entry, dict):
        return "<td>%s</td>" % esc(shown(entry))
    parts = ["%s %s" % (k, exact(v) if not isinstance(v, str) else v) for k, v in sorted(entry.items()) if k != "ci"]
    return '<td class="muted">%s</td>' % esc(", ".join(parts))


def _ci(entry: Any) -> str:
    ci = entry.get("ci") if isinstance(entry, dict) else None
    if not ci:
        return "<td></td><td></td>"
    return num(ci.get("lower")) + num(ci.get("upper"))


def identity(doc: Dict[str, Any]) -> str:
    run = doc["extensions"]["run"]
    rows = [["<td>%s</td>" % esc(k), "<td><code>%s</code></td>" % esc(_text(run[k]))] for k in sorted(run)]
    return "<h2>Run</h2>" + table(["field", "value"], rows, "identity")


def overall(doc: Dict[str, Any], href: Optional[Callable[[str, str], Optional[str]]] = None) -> str:
    """Every overall metric with its counts (and interval); with `href("metric", name)` a metric links to
    the cases behind it."""
    ext = doc["extensions"]["overall"]
    boot = doc["extensions"]["run"].get("bootstrap")
    level = "%g%%" % (100 * boot["level"]) if boot else ""
    headers = ["metric", "value", "counts"] + (["%s lower" % level, "%s upper" % level] if boot else [])
    rows = []
    for name in sorted(doc["overall"]):
        entry = ext.get(name)
        target = href("metric", name) if href else None
        rows.append(['<td id="m-%s">%s</td>' % (esc(name), link(target, name) if target else esc(name)),
                     num(doc["overall"][name]), _counts(entry)]
                    + ([_ci(entry)] if boot else []))
    note = ('<p class="muted">Intervals: %s percentile bootstrap, B=%s row resamples, seed %s.</p>'
            % (esc(level), esc(boot["B"]), esc(boot["seed"])) if boot else "")
    return ('<h2>Overall</h2><p>%s case(s).</p>' % esc(ext.get("n_cases"))
            + table(headers, rows, "overall") + note)


def coverage_cuts(doc: Dict[str, Any]) -> str:
    cuts = doc["extensions"]["overall"].get("coverage") or {}
    sel = sorted(k for k in doc["overall"] if k.startswith("selective_accuracy@"))
    if not cuts and not sel:
        return ""
    ext = doc["extensions"]["overall"]
    rows = []
    for name in sel:
        c = ext.get(name, {})
        rows.append(["<td>%s</td>" % esc(name), num(c.get("N")), num(c.get("accepted")), num(c.get("hits")),
                     num(c.get("coverage_actual")), num(c.get("cut_confidence", c.get("threshold"))),
                     num(doc["overall"][name])])
    for name in sorted(cuts):
        c = cuts[name]
        rows.append(["<td>coverage:%s</td>" % esc(name), num(c.get("N")), num(c.get("accepted")), num(c.get("hits")),
                     num(c.get("coverage_actual")), num(c.get("cut_confidence", c.get("threshold"))),
                     num(c.get("selective_accuracy"))])
    return "<h2>Coverage cuts</h2>" + table(["cut", "N", "accepted", "hits", "coverage", "confidence cut",
                                              "selective accuracy"], rows, "coverage")


#: A chart of the page by name (charts.report_chart_names) -> its HTML: inline SVG in a file, an image
#: the browser fetches on a serve page (views/serve/pages.py).
Picture = Callable[[str], str]


def inline(doc: Dict[str, Any]) -> Picture:
    return lambda name: charts.svg(charts.report_chart(doc, name))


def chart_svgs(doc: Dict[str, Any], picture: Optional[Picture] = None) -> str:
    """The reliability diagram and the risk-coverage curve of the report (views/charts.py)."""
    if "reliability" not in charts.report_chart_names(doc):
        return '<p class="muted">No paired cases (confidence and correctness): nothing to plot.</p>'
    picture = picture or inline(doc)
    return picture("reliability") + picture("risk_coverage")


def runs_charts(docs: Dict[str, Dict[str, Any]]) -> str:
    """Several runs' reliability lines and risk-coverage curves overlaid (inline SVG; `diff --html`)."""
    figs = charts.run_figures(docs)
    return '<h2>Calibration of the runs</h2><div class="plots">%s</div>' % "".join(charts.svg(f) for f in figs.values())


def histograms(doc: Dict[str, Any], dim: str, picture: Optional[Picture] = None) -> str:
    """The confidence histogram of each group of `dim`, or nothing (see charts.report_chart_names)."""
    name = "confidence-%s" % dim
    if name not in charts.report_chart_names(doc):
        return ""
    return ("<details><summary>Confidence per %s (right and wrong answers per bin)</summary>%s</details>"
            % (esc(dim), (picture or inline(doc))(name)))


def plots(doc: Dict[str, Any], href: Optional[Callable[[str, str], Optional[str]]] = None,
          picture: Optional[Picture] = None) -> str:
    """The two plots and the bin table; with `href("bin", "lower,upper")` a bin links to its cases."""
    ext = doc["extensions"]["overall"]
    bins = ext.get("reliability") or []
    body = ['<div class="plots">', chart_svgs(doc, picture), "</div>"]
    if bins:
        def cases(b: Dict[str, Any]) -> str:
            target = href("bin", "%r,%r" % (b["lower"], b["upper"])) if href and b.get("n_b") else None
            return "<td>%s</td>" % link(target, b["n_b"]) if target else num(b.get("n_b"))
        rows = [[num(b.get("bin")), num(b.get("lower")), num(b.get("upper")), cases(b),
                 num(b.get("mean_confidence")), num(b.get("accuracy")), num(b.get("gap"))] for b in bins]
        body.append("<details><summary>Reliability bins</summary>%s</details>"
                    % table(["bin", "lower", "upper", "cases", "mean confidence", "accuracy", "gap"], rows, "bins"))
    return "<h2>Calibration</h2>" + "".join(body)


def _slice_cell(value: Any, entry: Any) -> str:
    ci = entry.get("ci") if isinstance(entry, dict) else None
    if value is None:
        return "<td></td>"
    if not ci:
        return num(value)
    return ('<td class="n" data-v="%s">%s <span class="muted ci" data-lo="%s" data-hi="%s">[%s, %s]</span></td>'
            % (esc(exact(value)), esc(shown(value)), esc(exact(ci.get("lower"))), esc(exact(ci.get("upper"))),
               esc(shown(ci.get("lower"), "%.3f")), esc(shown(ci.get("upper"), "%.3f"))))


def _group_order(groups: Dict[str, Any], counts: Dict[str, Any], sort: Optional[Tuple[str, bool]]) -> List[str]:
    """The group keys by name, or by `sort` = (column, descending): "cases" or a metric; a missing or NaN
    value last either way, ties by name."""
    keys = sorted(groups)
    if sort is None or sort[0] == "key":
        return keys[::-1] if sort and sort[1] else keys

    def value(key: str) -> Any:
        v = counts.get(key, {}).get("n_cases") if sort[0] == "cases" else groups[key].get(sort[0])
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None
    present = sorted((k for k in keys if value(k) is not None), key=value, reverse=sort[1])
    return present + [k for k in keys if value(k) is None]


def slices(doc: Dict[str, Any], dims: Optional[List[str]] = None,
           href: Optional[Callable[[str, str], Optional[str]]] = None, sort: Optional[Tuple[str, bool]] = None,
           head: Optional[Callable[[str, str], str]] = None, picture: Optional[Picture] = None) -> str:
    """One table per slice dimension; with `href(dim, key)` (the serve run page) a group's name links to
    its cases. `sort` = (column, descending) orders the groups ("key", "cases" or a metric), and
    `head(dim, column)` gives a header's HTML (serve: a link that sorts by it)."""
    out = []
    ext = doc["extensions"]["slices"]
    for dim in (dims if dims is not None else list(doc["slices"])):
        groups = doc["slices"].get(dim, {})
        names = sorted({m for g in groups.values() for m in g})
        rows = []
        for key in _group_order(groups, ext.get(dim, {}), sort):
            counts = ext.get(dim, {}).get(key, {})
            target = href(dim, key) if href else None
            rows.append(["<td>%s</td>" % (link(target, key) if target else esc(key)), num(counts.get("n_cases"))]
                        + [_slice_cell(groups[key].get(m), counts.get(m)) for m in names])
        columns = [("key", dim), ("cases", "cases")] + [(m, m) for m in names]
        headers = [head(dim, c) if head else esc(text) for c, text in columns]
        out.append('<h3 id="slice-%s">by %s</h3>' % (esc(dim), esc(dim))
                   + table(headers, rows, "slice", raw_headers=True) + histograms(doc, dim, picture))
    return ("<h2>Slices</h2>" + "".join(out)) if out else ""


def sections(doc: Dict[str, Any], href: Optional[Callable[[str, str], Optional[str]]] = None,
             sort: Optional[Tuple[str, bool]] = None, head: Optional[Callable[[str, str], str]] = None,
             picture: Optional[Picture] = None) -> str:
    """Everything of the report, in reading order (`href(kind, key)`: links to the cases behind a
    metric, a reliability bin or a slice group; `sort`, `head`: the slice tables' order and headers;
    `picture`: how a chart is shown, inline SVG unless given)."""
    return "".join([overall(doc, href), coverage_cuts(doc), plots(doc, href, picture),
                    slices(doc, href=href, sort=sort, head=head, picture=picture), identity(doc)])


def cases_summary(summary: Dict[str, Any]) -> str:
    """The case list summarised (the full list is `report --json`): counts per answer type and the
    most confident wrong answers."""
    rows = [["<td>%s</td>" % esc(r["answer_type"]), num(r["n"]), num(r["n_correct"]), num(r["n_incorrect"]),
             num(r["n_unscored"])] for r in summary["types"]]
    out = ["<h2>Cases</h2>", table(["answer type", "cases", "correct", "incorrect", "unscored"],
                                   rows, "case-types")]
    wrong = summary["confident_errors"]
    if wrong:
        out.append("<h3>Most confident wrong answers (%d shown)</h3>" % len(wrong))
        out.append(table(["row", "qid", "expected", "predicted", "confidence", "language"],
                         [[num(r["row_index"]), cell(r["qid"]), "<td><code>%s</code></td>" % esc(r["expected_json"]),
                           cell(r["predicted"]), num(r["confidence"]), cell(r["language_key"])] for r in wrong],
                         "confident-errors"))
    return "".join(out)
