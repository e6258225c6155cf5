"""The pages of `laya-cases serve`, as HTML strings (no template engine, no script). Every value
goes through markup.esc / num / cell; every href is built with urllib.parse quoting."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional
from urllib.parse import quote, urlencode

from laya_cases.views.html import diff_view, report_view
from laya_cases.views.html.markup import cell, esc, link, num, page, sort_header, table
from laya_cases.views.serve.compare_pages import charts_section, diff_href, runs_form, side_href
from laya_cases.views.serve.params import OUTCOMES, SORTS

DIMS = ("language", "model", "qid", "tag")
CASE_COLUMNS = ("row_index", "qid", "language_key", "model_key", "tags", "answer_type", "expected_json", "predicted",
                "confidence", "correct")


def run_href(run_id: str, tail: str = "", query: Optional[Dict[str, Any]] = None) -> str:
    href = "/run/%s%s" % (quote(run_id, safe=""), tail)
    return href + ("?" + urlencode(query) if query else "")


def nav(run_id: Optional[str] = None) -> str:
    parts = [link("/", "Runs")]
    if run_id is not None:
        parts += [link(run_href(run_id), "Run %s" % run_id), link(run_href(run_id, "/cases"), "Cases")]
    return " ".join(parts)


def _select(name: str, values: List[str], chosen: Optional[str], blank: str = "(any)") -> str:
    options = ['<option value="">%s</option>' % esc(blank)]
    options += ['<option value="%s"%s>%s</option>' % (esc(v), " selected" if v == chosen else "", esc(v)) for v in values]
    return '<label>%s <select name="%s">%s</select></label>' % (esc(name), esc(name), "".join(options))


def compare_form(run_ids: List[str], a: Optional[str] = None, b: Optional[str] = None, by: Optional[str] = None) -> str:
    return ('<form class="filters" method="get" action="/compare">%s%s%s <button type="submit">Compare</button></form>'
            % (_select("a", run_ids, a, "(run A)"), _select("b", run_ids, b, "(run B)"), _select("by", list(DIMS), by, "(none)")))


def _run_cell(column: str, value: Any) -> str:
    if column == "run_id":
        return "<td>%s</td>" % link(run_href(value), value)
    if column.endswith("_sha256") and isinstance(value, str):       # the full digest on hover
        return '<td title="%s"><code>%s\u2026</code></td>' % (esc(value), esc(value[:12]))
    return cell(value)


def runs_page(columns: List[str], rows: List[tuple], damaged: Dict[str, str],
              chosen: Optional[Dict[str, str]] = None) -> str:
    """Every committed run; the column headers sort (again: the other way); CSV and JSON links."""
    chosen = chosen or {}
    body = []
    if not rows:
        body.append("<p>No committed runs in this warehouse.</p>")
    else:
        cells = [[_run_cell(c, v) for c, v in zip(columns, r)] for r in rows]
        def head(column: str) -> str:
            down = chosen.get("sort") == column and chosen.get("dir", "asc") == "asc"
            return link("/?" + urlencode({"sort": column, "dir": "desc" if down else "asc"}), column)
        take = " ".join(link("/?" + urlencode(dict(chosen, format=f)), f.upper()) for f in ("csv", "json"))
        body.append("<p>%d run(s). This list as %s.</p>" % (len(rows), take))
        body.append(table([head(c) for c in columns], cells, "runs", raw_headers=True))
        run_ids = [r[columns.index("run_id")] for r in rows]
        body.append("<h2>Compare two runs</h2>" + compare_form(run_ids))
        body.append("<h2>Compare 2 to 10 runs of one dataset</h2>" + runs_form(run_ids, [], with_by=False))
    for rid, problem in sorted(damaged.items()):
        body.append('<p class="muted">run %s is damaged and left out: %s</p>' % (esc(rid), esc(problem)))
    return page("Runs", "".join(body))


def slice_columns(doc: Dict[str, Any]) -> List[str]:
    """What the run page's slice tables sort by: the group name, its cases, or any metric they show."""
    return ["key", "cases"] + sorted({m for groups in doc["slices"].values() for g in groups.values() for m in g})


def run_page(run_id: str, doc: Dict[str, Any], run_ids: List[str], sort: Optional[str] = None,
             descending: bool = False) -> str:
    """The report of one run; its slice tables sorted by `sort` (a slice_columns name) when given."""
    def head(dim: str, column: str) -> str:
        return sort_header(dim if column == "key" else column, sort == column, descending,
                           lambda d: run_href(run_id, "", {"sort": column, "dir": d}) + "#slice-" + dim)
    order = (sort, descending) if sort else None
    body = ['<p>%s &middot; compare with: %s &middot; this page as %s, %s</p>'
            % (link(run_href(run_id, "/cases"), "Browse the cases"), compare_form(run_ids, run_id),
               link(run_href(run_id, "", {"format": "json"}), "json"), link(run_href(run_id, "", {"format": "csv"}), "csv")),
            report_view.sections(doc, href=lambda kind, key: _drill(run_id, kind, key), sort=order, head=head,
                                 picture=lambda name: chart_image(run_id, name))]
    said = " (slices by %s%s)" % (sort, ", descending" if descending else "") if sort else ""
    return page("Run %s%s" % (run_id, said), "".join(body), nav(run_id), images=True)


def chart_image(run_id: str, name: str) -> str:
    """A chart of the run page as an image the browser asks for after the page (app.py
    `/run/R/chart/NAME.svg`): the page's numbers never wait for the drawing."""
    return '<img class="chart" src="%s" alt="%s of run %s">' % (esc(run_href(run_id, "/chart/%s.svg" % name)),
                                                                 esc(name.replace("_", " ")), esc(run_id))


#: the metrics whose cases are worth a link: the wrong answers behind them
_WRONG_OF = {"choice_accuracy": "choice", "noul_accuracy": "noul"}


def _drill(run_id: str, kind: str, key: str) -> Optional[str]:
    """The cases page behind a number of the run page: a slice group, a metric, a reliability bin."""
    if kind in DIMS:
        return run_href(run_id, "/cases", {kind: key})
    if kind == "metric" and key in _WRONG_OF:
        return run_href(run_id, "/cases", {"answer_type": _WRONG_OF[key], "outcome": "incorrect",
                                           "sort": "confidence", "dir": "desc"})
    if kind == "bin":
        lower, upper = key.split(",")
        return run_href(run_id, "/cases", {"min_confidence": lower, "max_confidence": upper, "sort": "confidence"})
    return None


def cases_page(run_id: str, chosen: Dict[str, str], choices: Dict[str, List[str]], rows: List[Dict[str, Any]],
               n: int, next_query: Optional[Dict[str, str]], limit: int) -> str:
    form = ['<form class="filters" method="get" action="%s">' % esc(run_href(run_id, "/cases"))]
    form += [_select(dim, choices[dim], chosen.get(dim)) for dim in DIMS if choices.get(dim)]
    form.append(_select("answer_type", ["choice", "noul", "score"], chosen.get("answer_type")))
    form.append(_select("outcome", list(OUTCOMES), chosen.get("outcome")))
    for name in ("min_confidence", "max_confidence"):
        form.append('<label>%s <input name="%s" value="%s" size="6"></label>' % (esc(name), esc(name), esc(chosen.get(name, ""))))
    form.append('<label>search <input name="q" value="%s" size="16"></label>' % esc(chosen.get("q", "")))
    form.append(_select("sort", list(SORTS), chosen.get("sort"), "(row)"))
    form.append(_select("dir", ["asc", "desc"], chosen.get("dir"), "(asc)"))
    form.append('<label>limit <input name="limit" value="%s" size="4"></label>' % esc(chosen.get("limit", limit)))
    form.append('<button type="submit">Filter</button></form>')
    cells = []
    for r in rows:
        href = run_href(run_id, "/case", {"row": r["row_index"], "qid": r["qid"]})
        cells.append(['<td><a href="%s">%s</a></td>' % (esc(href), esc(r["row_index"]))]
                     + [cell(", ".join(r[c] or [])) if c == "tags" else cell(r[c]) for c in CASE_COLUMNS[1:]])
    classes = ["good" if r["correct"] else "bad" if r["correct"] is False else "" for r in rows]
    more = ""
    if next_query is not None:
        more = "<p>%s</p>" % link(run_href(run_id, "/cases", next_query), "Next page \u2192")
    first = {k: v for k, v in chosen.items() if k not in ("after_row", "after_qid", "offset")}
    paged = "after_row" in chosen or "offset" in chosen
    take = " ".join(link(run_href(run_id, "/cases", dict(chosen, format=f)), f.upper()) for f in ("csv", "json"))
    body = ["".join(form), '<p><span id="n-matching" data-v="%d">%d</span> case(s) match; showing %d. %s '
            'This page as %s.</p>' % (n, n, len(rows), link(run_href(run_id, "/cases", first), "first page") if paged
                                      else "", take),
            table([_sort_link(run_id, chosen, c) for c in CASE_COLUMNS], cells, "cases", classes, raw_headers=True),
            more]
    said = ", ".join("%s=%s" % (k, v) for k, v in sorted(first.items()) if k not in ("limit", "format"))
    return page("Cases of run %s%s" % (run_id, " (%s)" % said if said else ""), "".join(body), nav(run_id))


#: the cases page's column headers that sort (column -> the sort key of sql/serve/cases_page.sql)
_SORTED_BY = {"row_index": "row", "qid": "qid", "language_key": "language", "predicted": "predicted",
              "confidence": "confidence"}


def _sort_link(run_id: str, chosen: Dict[str, str], column: str) -> str:
    """A header: a link that sorts by the column (again: the other way), or the plain name."""
    key = _SORTED_BY.get(column)
    if key is None:
        return esc(column)
    query = {k: v for k, v in chosen.items() if k not in ("after_row", "after_qid", "offset", "sort", "dir")}
    return sort_header(column, chosen.get("sort", "row") == key, chosen.get("dir", "asc") != "asc",
                       lambda d: run_href(run_id, "/cases", dict(query, sort=key, dir=d)))



def _json_text(value: Optional[str]) -> str:
    if value is None:
        return ""
    try:
        return json.dumps(json.loads(value), ensure_ascii=False, indent=2, sort_keys=True)
    except ValueError:
        return value


def _input_text(value: Any) -> str:
    """A stored input as a reader wants it: a string as is, anything else as indented JSON in its own order."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


def _marks(option: str, case: Dict[str, Any]) -> str:
    gold = case["expected_json"] is not None and option in (case["expected_json"], _json_text(case["expected_json"]).strip('"'))
    return " ".join(m for m, on in (("gold", gold), ("predicted", option == case["predicted"])) if on)


def case_page(run_id: str, case: Dict[str, Any]) -> str:
    title = "Case %s / %s of run %s" % (case["row_index"], case["qid"], run_id)
    main = ("case_id", "row_index", "line_no", "qid", "question_type", "answer_type", "predicted", "confidence",
            "confidence_source", "correct", "score_mae", "language_key", "model_key", "tags", "call_ms")
    rows = [["<td>%s</td>" % esc(k), cell(", ".join(case[k] or [])) if k == "tags" else cell(case[k])] for k in main]
    body = ["<h2>Decision</h2>", table(["field", "value"], rows, "case")]
    body.append("<h2>Gold</h2><pre id=\"gold\">%s</pre>" % esc(_json_text(case["expected_json"])))
    row = json.loads(case["input_json"]) if case.get("input_json") else None
    if case.get("state_json") is not None:
        body.append("<h2>State</h2><pre id=\"state\">%s</pre>" % esc(_json_text(case["state_json"])))
    elif row is not None and "state" in row:
        body.append("<h2>State</h2><pre id=\"state\">%s</pre>" % esc(_input_text(row["state"])))
    else:
        body.append('<h2>State</h2><p class="muted" id="state">Not stored in this run: it was committed before '
                    'the store kept each dataset row (the store keeps a digest of the state in case_id).</p>')
    question = (row.get("questions") or {}).get(case["qid"]) if isinstance(row, dict) else None
    if question is not None:
        body.append("<h2>Question</h2><pre id=\"question\">%s</pre>" % esc(_input_text(question)))
    body.append("<h2>Instructions</h2><pre>%s</pre>" % esc(case["instructions"] or ""))
    options, texts, probs = case["options"] or [], case["option_texts"] or [], case["probabilities"] or []
    if options:
        orows = [["<td>%s</td>" % esc(o), "<td>%s</td>" % esc(texts[i] if i < len(texts) else ""),
                  num(probs[i] if i < len(probs) else None), cell(_marks(o, case))]
                 for i, o in enumerate(options)]
        body.append("<h2>Options</h2>" + table(["option", "text", "probability", ""], orows, "options"))
    body.append("<h2>Answer</h2><pre id=\"answer\">%s</pre>" % esc(_json_text(case["answer_json"])))
    shown = set(main) | {"expected_json", "state_json", "input_json", "instructions", "options", "option_texts", "probabilities",
                         "answer_json", "run_id"}
    extra = [["<td>%s</td>" % esc(k), cell(json.dumps(v) if isinstance(v, list) else v)]
             for k, v in case.items() if k not in shown and v is not None]
    if extra:
        body.append("<h2>Other stored columns</h2>" + table(["column", "value"], extra, "extra"))
    return page(title, "".join(body), nav(run_id))


#: The flip table's columns that sort (diff_view.FLIP_COLUMNS keys).
FLIP_SORTS = ("flip", "row_index", "line_no", "qid", "predicted_a", "confidence_a", "predicted_b", "confidence_b",
              "label_changed")


def sorted_flips(d: Dict[str, Any], sort: Optional[str], descending: bool) -> Dict[str, Any]:
    """The diff with its flips in `sort` order (stable on diff's own order; a null last either way)."""
    if sort is None:
        return d
    present = sorted((f for f in d["flips"] if f[sort] is not None), key=lambda f: f[sort], reverse=descending)
    return dict(d, flips=present + [f for f in d["flips"] if f[sort] is None])


#: Seconds between reloads of a compare page whose bootstrap interval is being drawn.
RELOAD_S = 3


def compare_page(d: Dict[str, Any], run_ids: List[str], sort: Optional[str] = None, descending: bool = False,
                 drawing: bool = False) -> str:
    """Two runs' diff; the flip table sorted by `sort` (a FLIP_SORTS key), its headers links that sort.
    `drawing`: the diff has no bootstrap interval yet (it is being drawn): the page says so and reloads."""
    a, b, by = d["run_a"], d["run_b"], d["by"]

    def head(key: str, text: str) -> str:
        if key not in FLIP_SORTS:
            return esc(text)
        return sort_header(text, sort == key, descending, lambda d: diff_href(a, b, by, sort=key, dir=d) + "#flips")
    taken = dict({"sort": sort, "dir": "desc" if descending else "asc"} if sort else {})
    note = ("<p id=\"drawing\"><strong>The paired bootstrap interval (B = %d) is being drawn.</strong> Every other "
            "number here is final; this page reloads every %d s until the interval is in.</p>"
            % (d["bootstrap"]["B"], RELOAD_S)) if drawing else ""
    body = (compare_form(run_ids, a, b, by) + note
            + "<p>This page as %s, %s (every flip)</p>" % (link(diff_href(a, b, by, format="json", **taken), "json"),
                                                          link(diff_href(a, b, by, format="csv", **taken), "csv"))
            + diff_view.sections(d, href=lambda row, qid: side_href([a, b], row, qid), charts=charts_section([a, b]),
                                 head=head))
    return page("Compare %s -> %s%s" % (a, b, " (flips by %s)" % sort if sort else ""), body, nav(), images=True,
                reload_s=RELOAD_S if drawing else None)


def error_page(status: int, message: str) -> str:
    return page("%d %s" % (status, {400: "Bad request", 404: "Not found", 405: "Method not allowed"}.get(status, "Error")),
                "<p id=\"error\">%s</p><p>%s</p>" % (esc(message), link("/", "Back to the runs")), nav())
