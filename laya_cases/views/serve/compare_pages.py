"""The HTML of the N-run compare pages (laya_cases/views/serve/compare.py reads the numbers). Every
value goes through markup.esc / num / cell; every href is built with urllib.parse quoting."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote, urlencode

from laya_cases.views.html.markup import cell, esc, link, num, page, sort_header, table

DIMS = ("language", "model", "qid", "tag")
SHOWS = {"outcome_differs": "outcome differs (some runs right, others wrong)",
         "prediction_differs": "prediction differs (two or more different answers)",
         "all_wrong": "all wrong (every run scored it, none right)"}
DELTA_COLUMNS = ("compared", "paired", "accuracy_a", "accuracy_b", "delta", "ci_lower", "ci_upper", "right_to_wrong",
                 "wrong_to_right", "flip_rate", "mcnemar_p", "mean_confidence_shift")
DELTA_HEADERS = ("compared", "paired", "accuracy, first run", "accuracy, this run", "delta", "95% CI low", "95% CI high",
                 "right -> wrong", "wrong -> right", "flip rate", "McNemar p (exact)", "mean confidence shift")
INTERVAL_NOTE = ("95% intervals: the normal approximation of diff's paired row bootstrap (the variance of the "
                 "delta as a ratio of per-row sums, clustered by dataset row: sql/serve/compare_deltas.sql), "
                 "computed in one pass; the exact bootstrap (B=2000, seed 0, `diff A B --json`) is the "
                 "\u201cfull diff\u201d link of each run. Every other number equals diff's.")


def compare_href(runs: List[str], **extra: Any) -> str:
    query = dict({"runs": ",".join(runs)}, **{k: v for k, v in extra.items() if v is not None})
    return "/compare?" + urlencode(query)


def diff_href(a: str, b: str, by: Optional[str] = None, **extra: Any) -> str:
    """The two-run page (`diff A B`'s numbers, its exact bootstrap): /compare?a=A&b=B[&by=]."""
    return "/compare?" + urlencode(dict({"a": a, "b": b}, **({"by": by} if by else {}), **extra))


def side_href(runs: List[str], row: int, qid: str) -> str:
    """The case side by side in the runs (app.py `/case`)."""
    return "/case?" + urlencode({"runs": ",".join(runs), "row": row, "qid": qid})


def grid_href(runs: List[str], **extra: Any) -> str:
    query = dict({"runs": ",".join(runs)}, **{k: v for k, v in extra.items() if v is not None})
    return "/compare/cases?" + urlencode(query)


def _run_link(run_id: str, tail: str = "", query: Optional[Dict[str, Any]] = None) -> str:
    return "/run/%s%s" % (quote(run_id, safe=""), tail) + ("?" + urlencode(query) if query else "")


def runs_form(run_ids: List[str], chosen: List[str], by: Optional[str] = None, with_by: bool = True) -> str:
    """A multi-select of runs (sends run=A&run=B...) and, on the compare page, the dimension; no script.
    The runs page leaves `by` out (the page's own links choose it), so its two-run form keeps the
    only `by` select and the only "Compare" button there."""
    options = "".join('<option value="%s"%s>%s</option>' % (esc(r), " selected" if r in chosen else "", esc(r))
                      for r in run_ids)
    dims = '<option value="">(none)</option>' + "".join(
        '<option value="%s"%s>%s</option>' % (esc(d), " selected" if d == by else "", esc(d)) for d in DIMS)
    return ('<form class="filters" method="get" action="/compare"><label>runs (2-10, the first is the reference) '
            '<select name="run" multiple size="%d">%s</select></label> %s<button type="submit">Side by side</button>'
            '</form>' % (min(8, max(2, len(run_ids))), options,
                         '<label>by <select name="by">%s</select></label> ' % dims if with_by else ""))


CHARTS = {"risk_coverage": "risk against coverage", "reliability": "accuracy per confidence bin"}


def chart_href(runs: List[str], name: str) -> str:
    """The SVG of one chart of the runs (app.py `/compare/chart/NAME.svg`)."""
    return "/compare/chart/%s.svg?%s" % (name, urlencode({"runs": ",".join(runs)}))


def charts_section(runs: List[str]) -> str:
    """The runs' risk-coverage curves and reliability lines, overlaid (views/charts.py), as images the
    browser asks for after the page: each run's report is built once and remembered, and the page's
    own numbers never wait for it."""
    images = "".join('<img class="chart" src="%s" alt="%s of %s">' % (esc(chart_href(runs, name)), esc(what),
                                                                       esc(", ".join(runs)))
                     for name, what in CHARTS.items())
    return '<h2>Calibration of the runs</h2><div class="plots">%s</div>' % images


def _delta_cells(r: Dict[str, Any]) -> List[str]:
    out = []
    for c in DELTA_COLUMNS:
        fmt = "%+.4f" if c in ("delta", "ci_lower", "ci_upper", "mean_confidence_shift") else "%.4f"
        out.append(num(r[c], fmt))
    return out


def deltas_section(runs: List[str], by: Optional[str], deltas: List[Dict[str, Any]]) -> str:
    first = runs[0]
    head = ["run"] + list(DELTA_HEADERS) + [""]
    overall = []
    for r in (d for d in deltas if d["dim"] == "overall"):
        full = link(diff_href(first, r["run_id"]), "full diff")
        overall.append(["<td>%s</td>" % link(_run_link(r["run_id"]), r["run_id"])] + _delta_cells(r) + ["<td>%s</td>" % full])
    body = ["<h2>Against %s</h2>" % esc(first), '<p class="muted" id="interval-note">%s</p>' % esc(INTERVAL_NOTE),
            table(head, overall, "compare-deltas")]
    groups = [d for d in deltas if d["dim"] != "overall"]
    if by:
        rows = []
        for r in groups:
            full = link(diff_href(first, r["run_id"], by), "full diff")
            rows.append(["<td>%s</td>" % esc(r["key"]), "<td>%s</td>" % esc(r["run_id"])] + _delta_cells(r)
                        + ["<td>%s</td>" % full])
        body.append("<h3>by %s</h3>" % esc(by) + table([by] + head, rows, "compare-deltas-by"))
    return "".join(body)


def _slice_order(runs: List[str], grid: Dict[tuple, Dict[str, Dict[str, Any]]], sort: Optional[Tuple[str, bool]]):
    """The per-slice rows: overall first, then the groups by name, or by `sort` = (key or a run, descending);
    a group a run did not score sorts last either way."""
    keys = sorted(k for k in grid if k[0] != "overall")
    if sort is not None and sort[0] != "key":
        scored = [k for k in keys if grid[k].get(sort[0]) is not None]
        keys = sorted(scored, key=lambda k: grid[k][sort[0]]["accuracy"], reverse=sort[1]) + \
            [k for k in keys if k not in set(scored)]
    elif sort is not None and sort[1]:
        keys.reverse()
    return [k for k in grid if k[0] == "overall"] + keys


def slices_section(runs: List[str], by: Optional[str], slices: List[Dict[str, Any]],
                   sort: Optional[Tuple[str, bool]] = None) -> str:
    grid: Dict[tuple, Dict[str, Dict[str, Any]]] = {}
    for r in slices:
        grid.setdefault((r["dim"], r["key"]), {})[r["run_id"]] = r
    rows = []
    for dim, key in _slice_order(runs, grid, sort):
        per = grid[(dim, key)]
        cells = ["<td>%s</td>" % esc("overall" if dim == "overall" else key)]
        for run in runs:
            r = per.get(run)
            cells.append(num(None) if r is None else
                         '<td class="n" data-v="%s" title="%d of %d">%.4f</td>' % (esc(repr(r["accuracy"])), r["hits"],
                                                                             r["scored"], r["accuracy"]))
        rows.append(cells)

    def head(column: str, text: str) -> str:
        return sort_header(text, sort is not None and sort[0] == column, bool(sort and sort[1]),
                           lambda d: compare_href(runs, by=by, sort=column, dir=d) + "#per-slice")
    pick = " ".join(link(compare_href(runs, by=d), d) if d != by else "<b>%s</b>" % esc(d) for d in DIMS)
    headers = [head("key", by or "group")] + [head(run, run) for run in runs]
    return ('<h2 id="per-slice">Per slice</h2><p>Accuracy of each run over the cases two or more runs scored (hover: '
            "hits of scored; the numbers of <code>stability --by DIM --json</code>'s run_accuracy). By: %s</p>" % pick
            + table(headers, rows, "compare-slices", raw_headers=True))


def _opened(prefix: str, value: Any, out: Dict[str, str]) -> None:
    """A JSON object's leaves as dotted keys (lists and scalars as canonical JSON)."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _opened("%s.%s" % (prefix, k), v, out)
    else:
        out[prefix] = json.dumps(value, sort_keys=True, ensure_ascii=False)


def _flat(row: Dict[str, Any]) -> Dict[str, str]:
    """A runs-table row as key -> text; settings_json and config_json opened into dotted keys
    (settings.prompt_sha256, config.versions.torch, ...)."""
    out: Dict[str, str] = {}
    for key, value in row.items():
        if key == "run_id":
            continue
        if key in ("settings_json", "config_json") and isinstance(value, str):
            try:
                opened = json.loads(value)
            except ValueError:
                opened = None
            if isinstance(opened, dict):
                _opened(key[:-5], opened, out)
                continue
        out[key] = "" if value is None else str(value)
    return out


def settings_section(runs: List[str], rows: Dict[str, dict]) -> str:
    flat = {r: _flat(rows[r]) for r in runs}
    keys = sorted(set().union(*(f.keys() for f in flat.values())))
    differ = [k for k in keys if len({flat[r].get(k) for r in runs}) > 1]
    equal = [k for k in keys if k not in differ]
    cells = [["<td>%s</td>" % esc(k)] + ["<td>%s</td>" % esc(flat[r].get(k, "(absent)")) for r in runs] for k in differ]
    return ("<h2>Settings</h2>" + (table(["key"] + runs, cells, "compare-settings") if differ else
                                   "<p>No setting differs.</p>")
            + '<p class="muted" id="settings-equal">Equal in every run: %s.</p>' % esc(", ".join(equal) or "none"))


def compare_page(runs: List[str], by: Optional[str], deltas: List[Dict[str, Any]], slices: List[Dict[str, Any]],
                 rows: Dict[str, dict], run_ids: List[str], sort: Optional[Tuple[str, bool]] = None) -> str:
    grid = " &middot; ".join([link(grid_href(runs), "every case")]
                             + [link(grid_href(runs, show=s), text) for s, text in SHOWS.items()])
    taken = "<p>This page as %s (every number), %s (the deltas)</p>" % (
        link(compare_href(runs, by=by, format="json"), "json"), link(compare_href(runs, by=by, format="csv"), "csv"))
    body = [runs_form(run_ids, runs, by), "<p>Case grid: %s</p>" % grid, taken, deltas_section(runs, by, deltas),
            slices_section(runs, by, slices, sort), charts_section(runs), settings_section(runs, rows)]
    return page("Compare %d runs: %s" % (len(runs), ", ".join(runs)), "".join(body), link("/", "Runs"), images=True)


def per_run(runs: List[str], row: Dict[str, Any]) -> Dict[str, Any]:
    """A grid row with one entry per run named (None where the run has no such case)."""
    at = {runs[i - 1]: j for j, i in enumerate(row["run_indexes"])}
    answers = {}
    for run in runs:
        j = at.get(run)
        answers[run] = None if j is None else {"row_index": row["row_indexes"][j], "predicted": row["predictions"][j],
                                               "correct": row["corrects"][j], "confidence": row["confidences"][j]}
    keep = ("case_id", "row_index", "qid", "language_key", "model_key", "tags", "expected_json")
    return dict({k: row[k] for k in keep}, runs=answers)


def _answer_cell(run: str, entry: Optional[Dict[str, Any]], qid: str) -> str:
    if entry is None:
        return '<td class="muted">(no case)</td>'
    mark = {True: "\u2713", False: "\u2717"}.get(entry["correct"], "\u2013")
    href = _run_link(run, "/case", {"row": entry["row_index"], "qid": qid})
    conf = entry["confidence"]
    return ('<td class="%s"><a href="%s">%s</a> %s%s</td>'
            % ("good" if entry["correct"] else "bad" if entry["correct"] is False else "", esc(href),
               esc("(none)" if entry["predicted"] is None else entry["predicted"]), mark,
               "" if conf is None else ' <span class="n" data-v="%s">%.2f</span>' % (esc(repr(conf)), conf)))


def grid_page(runs: List[str], show: Optional[str], chosen: Dict[str, str], found: List[Dict[str, Any]],
              counts: Dict[str, int], next_query: Optional[Dict[str, str]], limit: int) -> str:
    filters = [link(grid_href(runs), "every case (%d)" % counts["cases"]) if show else "<b>every case (%d)</b>" % counts["cases"]]
    for s, text in SHOWS.items():
        label = "%s (%d)" % (text, counts[s])
        filters.append("<b>%s</b>" % esc(label) if s == show else link(grid_href(runs, show=s), label))
    rows = []
    for r in found:
        entry = per_run(runs, r)
        rows.append(["<td>%s</td>" % link(side_href(runs, r["row_index"], r["qid"]), r["row_index"]),
                     "<td>%s</td>" % esc(r["qid"]), "<td>%s</td>" % esc(r["language_key"] or ""),
                     "<td>%s</td>" % esc(r["expected_json"] or "")]
                    + [_answer_cell(run, entry["runs"][run], r["qid"]) for run in runs])
    n = counts[show] if show else counts["cases"]
    first = {k: v for k, v in chosen.items() if k not in ("after_row", "after_qid")}
    exports = " ".join(link(grid_href(runs, **dict(chosen, format=f)), f) for f in ("csv", "json"))
    body = ["<p>%s</p>" % " &middot; ".join(filters),
            '<p><span id="n-matching" data-v="%d">%d</span> case(s) match; showing %d. This page as %s. %s %s</p>'
            % (n, n, len(found), exports, link(grid_href(runs, **first), "first page") if "after_row" in chosen else "",
               link(compare_href(runs), "back to the comparison")),
            table(["row", "qid", "language", "expected"] + runs, rows, "compare-grid")]
    if next_query is not None:
        body.append("<p>%s</p>" % link("/compare/cases?" + urlencode(next_query), "Next page \u2192"))
    return page("Cases of %d runs: %s" % (len(runs), ", ".join(runs)), "".join(body), link("/", "Runs"))


#: the decision fields the side-by-side page lines up, one row each
SIDE_FIELDS = ("predicted", "confidence", "correct", "answer_type", "confidence_source", "language_key", "model_key",
               "call_ms")


def side_page(runs: List[str], row: int, qid: str, cases: Dict[str, Optional[Dict[str, Any]]]) -> str:
    """One case in 2-10 runs side by side: its input once (the store's inputs), the gold, each run's
    decision, every option's probability per run, each run's raw answer; a run without the case says so."""
    found = [c for c in cases.values() if c is not None]
    row_json = next((c["input_json"] for c in found if c.get("input_json")), None)
    data = json.loads(row_json) if row_json else {}
    body = []
    if "state" in data:
        state = data["state"]
        body.append("<h2>State</h2><pre id=\"state\">%s</pre>" % esc(
            state if isinstance(state, str) else json.dumps(state, ensure_ascii=False, indent=2)))
    else:
        body.append('<p class="muted" id="state">The input is not stored for these runs.</p>')
    if found:
        body.append("<h2>Gold</h2><pre id=\"gold\">%s</pre>" % esc(found[0]["expected_json"] or ""))
    head = ["field"] + [link(_run_link(r, "/case", {"row": row, "qid": qid}), r) for r in runs]
    lines = [["<td>%s</td>" % esc(f)] + [cell(None if cases[r] is None else cases[r].get(f)) if cases[r] is not None
                                          else '<td class="muted">(no case)</td>' for r in runs] for f in SIDE_FIELDS]
    body.append("<h2>Decisions</h2>" + table(head, lines, "side", raw_headers=True))
    options = next((c["options"] for c in found if c.get("options")), None) or []
    if options:
        def p(run: str, i: int) -> str:
            probs = (cases[run] or {}).get("probabilities") or []
            return num(probs[i] if i < len(probs) else None)
        orows = [["<td>%s</td>" % esc(o)] + [p(r, i) for r in runs] for i, o in enumerate(options)]
        body.append("<h2>Probabilities</h2>" + table(["option"] + list(runs), orows, "side-options"))
    body.append("<h2>Raw answers</h2>" + "".join("<h3>%s</h3><pre>%s</pre>" % (esc(r), esc(
        "(no case)" if cases[r] is None else cases[r].get("answer_json") or "")) for r in runs))
    return page("Case %d / %s in %d runs: %s" % (row, qid, len(runs), ", ".join(runs)), "".join(body),
                link("/", "Runs") + " " + link(compare_href(runs), "Compare these runs"))
