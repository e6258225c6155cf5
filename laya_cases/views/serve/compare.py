"""The compare pages of `laya-cases serve` for 2 to 10 runs of one dataset (issue 32 item 4):
`/compare?runs=A,B,C[&by=DIM]` (or `run=A&run=B...`, what the form's multi-select sends) and the case
grid `/compare/cases?runs=...[&show=FILTER][&format=csv|json]`.

Every number is a fixed SQL file (sql/serve/compare_*.sql) over the runs' cases with the checked run
ids bound as a list parameter. The page is built to answer in seconds at 1M decisions a run (issue 30):
the intervals are the analytic (linearised, row-clustered) counterpart of `diff`'s paired row bootstrap
(sql/serve/compare_deltas.sql says how), with the full B=2000 bootstrap one link away
(`/compare?a=FIRST&b=RUN`, today's page); the case grid reads a window of dataset rows at a time and
widens it until a page is full, so a page never aggregates whole runs.
"""
from __future__ import annotations

import csv
import io
import json
import threading
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from laya_cases.query import sql as S
from laya_cases.query.sql import connect
from laya_cases.report import runset
from laya_cases.views.serve import compare_pages as V
from laya_cases.views.serve import params as P
from laya_cases.views.serve.data import remember
from laya_cases.views.serve import tables as T
from laya_cases.views.serve.tables import FORMATS, strict

MIN_RUNS, MAX_RUNS = 2, 10
DIMS = ("language", "model", "qid", "tag")
SHOWS = ("outcome_differs", "prediction_differs", "all_wrong")

FIRST_WINDOW = 4096          # dataset rows the case grid reads first; doubled until a page is full
_CACHED = 16


def run_list(items: Sequence[Tuple[str, str]], known: List[str]) -> List[str]:
    """The runs a compare URL names, checked: `runs=A,B,C` once, or `run=` repeated, not both."""
    named: List[str] = []
    forms = {name for name, _ in items if name in ("runs", "run")}
    if len(forms) > 1:
        raise P.BadRequest("name the runs once: runs=A,B,C or run=A&run=B, not both")
    if sum(1 for name, _ in items if name == "runs") > 1:
        raise P.BadRequest("parameter 'runs' given more than once")
    for name, value in items:
        if name == "runs":
            named += [v for v in P.text(value, "runs").split(",") if v != ""]
        elif name == "run" and P.text(value, "run") != "":
            named.append(value)
    if not MIN_RUNS <= len(named) <= MAX_RUNS:
        raise P.BadRequest("compare takes %d to %d runs, got %d" % (MIN_RUNS, MAX_RUNS, len(named)))
    twice = sorted({r for r in named if named.count(r) > 1})
    if twice:
        raise P.BadRequest("run %r is named twice" % twice[0][:80])
    return [P.run_id(r, known) for r in named]


def _rest(items: Sequence[Tuple[str, str]], allowed: Sequence[str]) -> Dict[str, str]:
    return P.single([(n, v) for n, v in items if n not in ("runs", "run")], allowed)


class Compare:
    """The compare pages' reads: one DuckDB connection per set of runs (views over their files),
    and the per-runs results remembered (committed runs never change)."""

    def __init__(self, data):
        self.data = data
        self._lock = threading.Lock()
        self._cons: "OrderedDict[tuple, Any]" = OrderedDict()
        self._memo: "OrderedDict[tuple, Any]" = OrderedDict()

    def _remember(self, cache: OrderedDict, key, make):
        return remember(self._lock, cache, key, make, _CACHED)

    def _key(self, runs: List[str]) -> tuple:
        return tuple((r,) + tuple(self.data.wh.stamp(r)) for r in runs)

    def cursor(self, runs: List[str]):
        return self._remember(self._cons, self._key(sorted(runs)), lambda: connect(self.data.wh, sorted(runs))).cursor()

    def _query(self, runs: List[str], name: str, params: Dict[str, Any]) -> List[Dict[str, Any]]:
        key = (name, tuple(sorted(params.items()))) + self._key(runs)
        return self._remember(self._memo, key, lambda: S.rows(S.query(self.cursor(runs), name, dict(params, runs=runs))))

    def check(self, runs: List[str]) -> Dict[str, dict]:
        """Each run's runs-table row, once the runs are known to share a dataset (a 400 otherwise)."""
        return self._remember(self._memo, ("runset",) + self._key(runs),
                              lambda: runset.same_dataset(self.data.wh, runs, "compare"))

    def deltas(self, runs: List[str], by: Optional[str]) -> List[Dict[str, Any]]:
        return self._query(runs, "serve/compare_deltas.sql", {"dim": by})

    def slices(self, runs: List[str], by: Optional[str]) -> List[Dict[str, Any]]:
        return self._query(runs, "serve/compare_slices.sql", {"dim": by})

    def counts(self, runs: List[str]) -> Dict[str, int]:
        return self._query(runs, "serve/compare_grid_counts.sql", {})[0]

    def grid(self, runs: List[str], show: Optional[str], after: Optional[tuple], limit: int,
             n_rows: int) -> List[Dict[str, Any]]:
        """One page of the case grid: windows of dataset rows [lo, hi), doubled, until `limit` cases
        pass the filter or the rows run out; the window starts at the keyset's row."""
        con = self.cursor(runs)
        found: List[Dict[str, Any]] = []
        lo, width = (after[0] if after else 0), FIRST_WINDOW
        while len(found) < limit and lo < n_rows:
            hi = min(n_rows, lo + width)
            params = {"runs": runs, "show": show, "lo_row": lo, "hi_row": hi, "limit": limit - len(found),
                      "after_row": after[0] if after else None, "after_qid": after[1] if after else None}
            found += S.rows(S.query(con, "serve/compare_grid.sql", params))
            lo, width = hi, width * 2
        return found


def page(cmp: Compare, items: Sequence[Tuple[str, str]]) -> Tuple[str, str]:
    """/compare?runs=A,B,...[&by=DIM][&sort=key|RUN&dir=][&format=csv|json]: (body, media type). The per-slice
    table sorts by its group or a run's accuracy; JSON is every number of the page, CSV its deltas."""
    known = cmp.data.run_ids()
    runs = run_list(items, known)
    raw = _rest(items, ("by", "sort", "dir", "format"))
    by = P.one_of(raw.get("by"), "by", DIMS)
    sort = P.one_of(raw.get("sort"), "sort", ["key"] + runs)
    descending = (P.one_of(raw.get("dir"), "dir", ("asc", "desc")) or "asc") == "desc"
    fmt = P.one_of(raw.get("format"), "format", FORMATS) or "html"
    rows = cmp.check(runs)
    deltas, slices = cmp.deltas(runs, by), cmp.slices(runs, by)
    if fmt == "json":
        doc = {"runs": runs, "by": by, "deltas": deltas, "slices": slices}
        return json.dumps(strict(doc), ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n", "application/json"
    if fmt == "csv":
        return T.as_csv(("run_id", "dim", "key") + V.DELTA_COLUMNS, deltas)
    return (V.compare_page(runs, by, deltas, slices, rows, known, (sort, descending) if sort else None),
            "text/html; charset=utf-8")


def cases(cmp: Compare, items: Sequence[Tuple[str, str]]) -> Tuple[str, str]:
    """/compare/cases?runs=...: (body, media type) of one page of the case grid, HTML, CSV or JSON."""
    known = cmp.data.run_ids()
    runs = run_list(items, known)
    raw = _rest(items, ("show", "after_row", "after_qid", "limit", "format"))
    show = P.one_of(raw.get("show"), "show", SHOWS)
    fmt = P.one_of(raw.get("format"), "format", FORMATS) or "html"
    limit = P.integer(raw.get("limit"), "limit", *P.PAGE_SIZES) or P.DEFAULT_PAGE
    rows = cmp.check(runs)
    n_rows = max(r["n_rows"] or 0 for r in rows.values())
    after_row = P.integer(raw.get("after_row"), "after_row", 0, max(0, n_rows - 1))
    after_qid = raw.get("after_qid")
    if after_qid is not None:
        P.text(after_qid, "after_qid")
    if (after_row is None) != (after_qid is None):
        raise P.BadRequest("after_row and after_qid go together")
    after = None if after_row is None else (after_row, after_qid)
    counts = cmp.counts(runs)
    found = cmp.grid(runs, show, after, limit, n_rows) if counts[show or "cases"] else []
    next_query = None
    if len(found) == limit:
        next_query = dict(raw, runs=",".join(runs), after_row=str(found[-1]["row_index"]), after_qid=found[-1]["qid"])
    if fmt == "csv":
        return grid_csv(runs, found), "text/csv; charset=utf-8"
    if fmt == "json":
        doc = {"runs": runs, "show": show, "rows": [V.per_run(runs, r) for r in found],
               "next": None if next_query is None else {"after_row": found[-1]["row_index"],
                                                        "after_qid": found[-1]["qid"]}}
        return json.dumps(strict(doc), ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n", "application/json"
    return V.grid_page(runs, show, raw, found, counts, next_query, limit), "text/html; charset=utf-8"


def grid_csv(runs: List[str], found: List[Dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["row_index", "qid", "language_key", "model_key", "expected_json"]
                    + ["%s.%s" % (r, c) for r in runs for c in ("predicted", "correct", "confidence")])
    for row in found:
        entry = V.per_run(runs, row)
        cells = [entry[k] for k in ("row_index", "qid", "language_key", "model_key", "expected_json")]
        for run in runs:
            a = entry["runs"][run] or {}
            cells += [a.get("predicted"), {True: "true", False: "false"}.get(a.get("correct"), ""),
                      "" if a.get("confidence") is None else repr(a["confidence"])]
        writer.writerow(["" if c is None else c for c in cells])
    return out.getvalue()
