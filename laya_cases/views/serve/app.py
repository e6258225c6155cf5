"""The Starlette app: GET routes only, each checking its URL values (params.py) before any query,
and one error page for every failure (400 for a bad value, 404, 405; a 500 shows no traceback)."""
from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from laya_cases.core.errors import UsageError
from laya_cases.views import charts
from laya_cases.views.html.diff_view import FLIP_COLUMNS
from laya_cases.views.serve import compare as C
from laya_cases.views.serve import compare_pages as V
from laya_cases.views.serve import pages
from laya_cases.views.serve import params as P
from laya_cases.views.serve import tables as T
from laya_cases.views.serve.data import Data

_CASES_PARAMS = ("language", "model", "tag", "qid", "answer_type", "outcome", "min_confidence", "max_confidence", "q", "sort",
                 "dir", "offset", "format", "after_row",
                 "after_qid", "limit")
_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data: 'self'; form-action 'self'"}
log = logging.getLogger("laya_cases.views.serve")


def _taken(body_and_type) -> Response:
    """A page's CSV or JSON (views/serve/tables.py), with the pages' headers."""
    body, media = body_and_type
    return Response(body, media_type=media, headers=_HEADERS)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=_HEADERS)


def _run(data: Data, request: Request) -> str:
    return P.run_id(request.path_params["run_id"], data.run_ids())


def _compare_cases(many: C.Compare, request: Request) -> Response:
    """The case grid of 2-10 runs: HTML, CSV or JSON (compare.py)."""
    body, media = C.cases(many, request.query_params.multi_items())
    return Response(body, media_type=media, headers=_HEADERS)


def _cases(data: Data, request: Request) -> Response:
    """The cases page: filters, search, sort, paging, and the page as CSV or JSON."""
    run_id = _run(data, request)
    raw = P.single(request.query_params.multi_items(), _CASES_PARAMS)
    choices = data.filter_values(run_id)
    filters = {dim: P.one_of(raw.get(dim), dim, choices[dim]) for dim in ("language", "model", "qid", "tag")}
    filters["outcome"] = P.one_of(raw.get("outcome"), "outcome", P.OUTCOMES)
    filters["answer_type"] = P.one_of(raw.get("answer_type"), "answer_type", ("choice", "noul", "score"))
    filters["min_confidence"] = P.unit(raw.get("min_confidence"), "min_confidence")
    filters["max_confidence"] = P.unit(raw.get("max_confidence"), "max_confidence")
    if None not in (filters["min_confidence"], filters["max_confidence"]) and \
            filters["min_confidence"] > filters["max_confidence"]:
        raise P.BadRequest("min_confidence is above max_confidence")
    filters["q"] = raw.get("q", "").strip() or None
    sort = P.one_of(raw.get("sort"), "sort", P.SORTS) or "row"
    descending = (P.one_of(raw.get("dir"), "dir", ("asc", "desc")) or "asc") == "desc"
    fmt = P.one_of(raw.get("format"), "format", T.FORMATS) or "html"
    limit = P.integer(raw.get("limit"), "limit", *P.PAGE_SIZES) or P.DEFAULT_PAGE
    offset = P.integer(raw.get("offset"), "offset", 0, P.MAX_OFFSET)
    after_row = P.integer(raw.get("after_row"), "after_row")
    after_qid = P.one_of(raw.get("after_qid"), "after_qid", choices["qid"])
    if (after_row is None) != (after_qid is None):
        raise P.BadRequest("after_row and after_qid go together")
    keyset = sort == "row" and not descending          # row order pages by keyset, any other by offset
    if after_row is not None and (not keyset or offset is not None):
        raise P.BadRequest("after_row pages the row order; a sorted page takes offset")
    rows, n = data.cases_page(run_id, filters, None if after_row is None else (after_row, after_qid), limit,
                              sort, descending, offset)
    if fmt == "csv":
        return _taken(T.as_csv(pages.CASE_COLUMNS, rows))
    if fmt == "json":
        return _taken(T.as_json({"run_id": run_id, "matching": n, "query": raw, "rows": rows}))
    next_query = None
    if len(rows) == limit:
        next_query = (dict(raw, after_row=str(rows[-1]["row_index"]), after_qid=rows[-1]["qid"]) if keyset
                      else dict(raw, offset=str((offset or 0) + limit)))
    return _html(pages.cases_page(run_id, raw, choices, rows, n, next_query, limit))


def _side(data: Data, many: C.Compare, request: Request) -> Response:
    """One case side by side in 2-10 runs of one dataset: /case?runs=A,B&row=N&qid=Q."""
    items = request.query_params.multi_items()
    runs = C.run_list(items, data.run_ids())
    many.check(runs)                                  # one dataset: the same row is the same case
    raw = P.single([(n, v) for n, v in items if n not in ("runs", "run")], ("row", "qid"))
    if "row" not in raw or "qid" not in raw:
        raise P.BadRequest("a case is named by row and qid")
    row = P.integer(raw["row"], "row")
    qid = P.one_of(raw["qid"], "qid", sorted({q for r in runs for q in data.filter_values(r)["qid"]}))
    cases = {r: data.case(r, row, qid) for r in runs}
    if all(c is None for c in cases.values()):
        raise HTTPException(404, "no run of %s has a case at row %d with qid %s" % (", ".join(runs), row, qid))
    return _html(V.side_page(runs, row, qid, cases))


def _two(data: Data, request: Request) -> Response:
    """/compare?a=A&b=B[&by=][&sort=&dir=][&format=]: two runs' diff, its flips sortable and taken away. Two
    big runs' page first comes without its bootstrap interval and reloads itself until it is drawn."""
    raw = P.single(request.query_params.multi_items(), ("a", "b", "by", "sort", "dir", "format"))
    if "a" not in raw or "b" not in raw:
        raise P.BadRequest("compare needs two runs: ?a=RUN&b=RUN")
    known = data.run_ids()
    a, b = P.run_id(raw["a"], known), P.run_id(raw["b"], known)
    by = P.one_of(raw.get("by"), "by", pages.DIMS)
    sort = P.one_of(raw.get("sort"), "sort", pages.FLIP_SORTS)
    descending = (P.one_of(raw.get("dir"), "dir", ("asc", "desc")) or "asc") == "desc"
    fmt = P.one_of(raw.get("format"), "format", T.FORMATS) or "html"
    d, whole = data.diff(a, b, by, wait=fmt != "html")       # a file is always the whole diff
    d = pages.sorted_flips(d, sort, descending)
    if fmt == "json":
        return _taken(T.as_json(d))
    if fmt == "csv":
        return _taken(T.as_csv([key for key, _ in FLIP_COLUMNS], d["flips"]))
    return _html(pages.compare_page(d, known, sort, descending, drawing=not whole))


def _runs(data: Data, request: Request) -> Response:
    """The runs list, oldest first or sorted by a column (`sort`, `dir`), as HTML, CSV or JSON."""
    raw = P.single(request.query_params.multi_items(), ("sort", "dir", "format"))
    columns, rows, damaged = data.runs()
    sort = P.one_of(raw.get("sort"), "sort", columns)
    descending = (P.one_of(raw.get("dir"), "dir", ("asc", "desc")) or "asc") == "desc"
    fmt = P.one_of(raw.get("format"), "format", T.FORMATS) or "html"
    if sort is not None:                       # stable on the listing's own order; a null sorts last either way
        at = columns.index(sort)
        present = sorted((r for r in rows if r[at] is not None), key=lambda r: r[at], reverse=descending)
        rows = present + [r for r in rows if r[at] is None]
    records = [dict(zip(columns, r)) for r in rows]
    if fmt == "csv":
        return _taken(T.as_csv(columns, records))
    if fmt == "json":
        return _taken(T.as_json({"runs": records, "damaged": damaged}))
    return _html(pages.runs_page(columns, rows, damaged, raw))


def build(wh) -> Starlette:
    data = Data(wh)
    many = C.Compare(data)

    def runs(request: Request):
        return _runs(data, request)

    def run(request: Request):
        run_id = _run(data, request)
        raw = P.single(request.query_params.multi_items(), ("sort", "dir", "format"))
        doc = data.report(run_id)
        sort = P.one_of(raw.get("sort"), "sort", pages.slice_columns(doc))
        descending = (P.one_of(raw.get("dir"), "dir", ("asc", "desc")) or "asc") == "desc"
        fmt = P.one_of(raw.get("format"), "format", T.FORMATS) or "html"
        if fmt == "json":
            return _taken(T.as_json(doc))
        if fmt == "csv":
            return _taken(T.as_csv(T.REPORT_COLUMNS, T.report_rows(doc)))
        return _html(pages.run_page(run_id, doc, data.run_ids(), sort, descending))

    def cases(request: Request):
        return _cases(data, request)

    def case(request: Request):
        run_id = _run(data, request)
        raw = P.single(request.query_params.multi_items(), ("row", "qid"))
        if "row" not in raw or "qid" not in raw:
            raise P.BadRequest("a case is named by row and qid")
        row = P.integer(raw["row"], "row", 0, max(0, data.run_row(run_id)["n_rows"] - 1))
        qid = P.one_of(raw["qid"], "qid", data.filter_values(run_id)["qid"])
        found = data.case(run_id, row, qid)
        if found is None:
            raise HTTPException(404, "run %s has no case at row %d with qid %s" % (run_id, row, qid))
        return _html(pages.case_page(run_id, found))

    def compare(request: Request):
        items = request.query_params.multi_items()
        if any(name in ("runs", "run") for name, _ in items):      # 2-10 runs: compare.py
            return _taken(C.page(many, items))
        return _two(data, request)

    def run_chart(request: Request):
        run_id = _run(data, request)
        P.single(request.query_params.multi_items(), ())
        name = P.one_of(request.path_params["name"], "chart", charts.report_chart_names(data.report(run_id)))
        return Response(data.run_chart(run_id, name), media_type="image/svg+xml", headers=_HEADERS)

    def chart(request: Request):
        items = request.query_params.multi_items()
        runs = C.run_list(items, data.run_ids())
        P.single([(n, v) for n, v in items if n not in ("runs", "run")], ())
        name = P.one_of(request.path_params["name"], "chart", tuple(V.CHARTS))
        return Response(data.chart(runs, name), media_type="image/svg+xml", headers=_HEADERS)

    def no_page(request: Request):
        raise P.BadRequest("no such page under /run/: %r" % request.url.path[:120])

    async def bad_request(request: Request, exc: Exception):
        return _html(pages.error_page(400, str(exc)), 400)

    async def http_error(request: Request, exc: HTTPException):
        return _html(pages.error_page(exc.status_code, exc.detail or ""), exc.status_code)

    async def server_error(request: Request, exc: Exception):
        log.error("serve: %s on %s", type(exc).__name__, request.url.path)
        return _html(pages.error_page(500, "internal error (%s); nothing was changed" % type(exc).__name__), 500)

    routes = [Route("/", runs), Route("/run/{run_id}", run), Route("/run/{run_id}/cases", cases),
              Route("/run/{run_id}/case", case), Route("/run/{run_id}/chart/{name}.svg", run_chart),
              Route("/compare", compare),
              Route("/compare/cases", lambda request: _compare_cases(many, request)),
              Route("/compare/chart/{name}.svg", chart),
              Route("/case", lambda request: _side(data, many, request)),
              Route("/run/{rest:path}", no_page)]
    handlers = {P.BadRequest: bad_request, UsageError: bad_request, HTTPException: http_error, Exception: server_error}
    return Starlette(routes=routes, exception_handlers=handlers)
