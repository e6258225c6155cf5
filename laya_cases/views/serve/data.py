"""What the pages read, through fixed SQL files (sql/serve/) with bound parameters: never a whole
table into Python. Reports and diffs are the library's own (report.build, diff.diff), cached per run
file stamp (a committed run never changes; a new commit of an id after gc gets a new stamp)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.harness.diff_blocks import DIFF_BLOCKS
from laya_cases.query import listing
from laya_cases.query import sql as sqlfiles
from laya_cases.query.sql import connect
from laya_cases.report import build as R
from laya_cases.report import diff as D
from laya_cases.views import charts

DIFF_BOOTSTRAP = 2000          # `laya-cases diff`'s default, so the compare page equals `diff --json`
#: Two runs with more cases than this in all are first shown without their bootstrap interval, which is drawn
#: on a thread meanwhile (~10 s at a million cases each; the rest of the diff ~3 s).
SYNC_CASES = 200_000
_CACHED = 16
_COUNTS = 256


def remember(lock, cache: OrderedDict, key, make, size: int):
    """cache[key], made by make() on a miss; the `size` most recently used entries are kept. `make` runs
    outside the lock (two requests may both make a value; either is the same)."""
    with lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with lock:
        cache[key] = value
        while len(cache) > size:
            cache.popitem(last=False)
    return value


class Data:
    """The warehouse as the pages read it."""

    def __init__(self, wh):
        self.wh = wh
        self._lock = threading.Lock()
        self._cons: "OrderedDict[tuple, Any]" = OrderedDict()
        self._docs: "OrderedDict[tuple, Any]" = OrderedDict()
        self._counts: "OrderedDict[tuple, int]" = OrderedDict()
        self._charts: "OrderedDict[tuple, str]" = OrderedDict()
        self._drawing: Dict[tuple, Future] = {}      # diff key -> the diff with its interval, being drawn

    # ------------------------------------------------------------------ caches
    def _stamp(self, run_id: str) -> tuple:
        return self.wh.stamp(run_id)

    def _remember(self, cache: OrderedDict, key, make, size: int = _CACHED):
        return remember(self._lock, cache, key, make, size)

    def cursor(self, run_id: str):
        """A cursor on the run's cached connection (views over its Parquet files; one per request)."""
        return self._remember(self._cons, self._stamp(run_id), lambda: connect(self.wh, [run_id])).cursor()

    # ------------------------------------------------------------------ runs
    def run_ids(self) -> List[str]:
        return self.wh.run_ids()

    def runs(self) -> Tuple[List[str], List[tuple], Dict[str, str]]:
        """(columns, rows, damaged run -> problem) of every committed run, oldest first."""
        self.wh.damaged = {}
        columns, rows = listing.runs(connect(self.wh))
        return columns or [], list(rows), dict(self.wh.damaged)

    def run_row(self, run_id: str) -> Dict[str, Any]:
        return sqlfiles.rows(self.cursor(run_id).execute("SELECT * FROM runs WHERE run_id = $run_id",
                                                         {"run_id": run_id}))[0]

    def report(self, run_id: str) -> Dict[str, Any]:
        """`report RUN --json --no-cases`, as a dict."""
        def make():
            return R.build(connect(self.wh, [run_id]), run_id, R.Options(include_cases=False))
        return self._remember(self._docs, ("report",) + self._stamp(run_id), make)

    def run_chart(self, run_id: str, name: str) -> str:
        """The SVG of one chart of the run page (charts.report_chart), from the cached report."""
        def make():
            doc = self.report(run_id)
            with charts.DRAWING:
                return charts.svg(charts.report_chart(doc, name))
        return self._remember(self._charts, ("run", name) + tuple(self._stamp(run_id)), make)

    def chart(self, runs: List[str], name: str) -> str:
        """The SVG of one overlay chart of the runs (views/charts.run_figures), from their cached reports."""
        def make():
            docs = {r: self.report(r) for r in runs}
            with charts.DRAWING:
                return charts.svg(charts.run_figures(docs)[name])
        return self._remember(self._charts, (name,) + tuple((r,) + tuple(self._stamp(r)) for r in runs), make)

    def diff(self, run_a: str, run_b: str, by: Optional[str], wait: bool = True) -> Tuple[Dict[str, Any], bool]:
        """(`diff A B [--by DIM] --json` as a dict, True), or without `wait`, for two runs of more than SYNC_CASES
        cases whose interval is not drawn yet, (the same diff without its bootstrap interval, False): the
        interval is drawn on a thread meanwhile, and a later call gets the whole diff."""
        key = ("diff", by) + self._stamp(run_a) + self._stamp(run_b)

        def whole() -> Dict[str, Any]:
            return D.diff(self.wh, run_a, run_b, by=by, bootstrap=DIFF_BOOTSTRAP, blocks=DIFF_BLOCKS)
        with self._lock:
            done = self._docs.get(key)
            drawing = self._drawing.get(key)
        if done is not None:
            return self._remember(self._docs, key, whole), True
        if drawing is None and (wait or self._cases(run_a) + self._cases(run_b) <= SYNC_CASES):
            return self._remember(self._docs, key, whole), True
        if drawing is None:
            drawing = self._draw(key, whole)
        if wait:
            return drawing.result(), True
        first = ("diff-first", by) + key[2:]
        return self._remember(self._docs, first, lambda: D.diff(self.wh, run_a, run_b, by=by, bootstrap=DIFF_BOOTSTRAP,
                                                                 blocks=DIFF_BLOCKS, interval=False)), False

    def _cases(self, run_id: str) -> int:
        row = self.run_row(run_id)
        return int(row["n_cases"] or 0) + int(row["n_errors"] or 0)

    def _draw(self, key: tuple, whole) -> Future:
        """The whole diff made on a thread of its own (one per key), cached when done."""
        with self._lock:
            if key in self._drawing:
                return self._drawing[key]
            future: Future = Future()
            self._drawing[key] = future

        def run() -> None:
            try:
                doc = self._remember(self._docs, key, whole)
            except BaseException as exc:         # noqa: BLE001 -- the page that waits on it shows the error
                future.set_exception(exc)
            else:
                future.set_result(doc)
            finally:
                with self._lock:
                    self._drawing.pop(key, None)
        threading.Thread(target=run, name="serve-diff-interval", daemon=True).start()
        return future

    # ------------------------------------------------------------------ cases
    def filter_values(self, run_id: str) -> Dict[str, List[str]]:
        out: Dict[str, List[str]] = {"language": [], "model": [], "qid": [], "tag": []}
        for dim, value in sqlfiles.query(self.cursor(run_id), "serve/filter_values.sql", {"run_id": run_id}).fetchall():
            out[dim].append(value)
        return out

    def cases_page(self, run_id: str, filters: Dict[str, Any], after: Optional[tuple], limit: int,
                   sort: str = "row", descending: bool = False, offset: Optional[int] = None):
        """(rows of one page, number of cases passing the filters and the search `q`); the page is in
        `sort` order from `offset`, or in row order after the keyset `after`."""
        params = dict(filters, run_id=run_id, after_row=None, after_qid=None, limit=None, sort=sort,
                      descending=descending, offset=None)
        con = self.cursor(run_id)
        key = ("count",) + self._stamp(run_id) + tuple(sorted(filters.items()))      # paging re-counts nothing
        n = self._remember(self._counts, key,        # no keyset, no limit: every case the pages walk through
                           lambda: sqlfiles.count(con, "serve/cases_page.sql", params), _COUNTS)
        params.update(after_row=after[0] if after else None, after_qid=after[1] if after else None, limit=limit,
                      offset=offset)
        return sqlfiles.rows(sqlfiles.query(con, "serve/cases_page.sql", params)), n

    def case(self, run_id: str, row_index: int, qid: str) -> Optional[Dict[str, Any]]:
        found = sqlfiles.rows(sqlfiles.query(self.cursor(run_id), "serve/case.sql",
                                             {"run_id": run_id, "row_index": row_index, "qid": qid}))
        return found[0] if found else None
