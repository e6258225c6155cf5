"""One report, one trip to the store.

`report RUN --json F --html H --baseline B` reads the run through one connection, opened once. The
same connection serves the document, the JSON stream of its cases, the HTML case summary and the
baseline run's report. Its views cover the run and, when `--baseline` names a committed run, that run
too: every report query filters by run id. Before, the store was opened up to four times, and each
open lists the files and checks their footers again.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Optional, Tuple

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import engines
from laya_cases.query import sql as sqlfiles
from laya_cases.report import build as R
from laya_cases.report.audit import apply_relabels
from laya_cases.report.request import score_within_warnings
from laya_cases.store.layout import is_run_id


class ReportSession:
    """The connection of one report of `run_id`, opened on first use, with `baseline` when it names a
    committed run (a report file is read by the gates as before)."""

    def __init__(self, wh, run_id: str, options: R.Options, baseline: Optional[str] = None,
                 relabels: bool = False):
        self.wh, self.run_id, self.options, self.relabels = wh, run_id, options, relabels
        self.engine, self.master = engines.of(options)
        runs = [run_id] if wh.run_state(run_id) is not None else []      # unknown: require_run names it
        if baseline is not None and baseline not in runs and self._committed(baseline):
            runs.append(baseline)
        self.runs: List[str] = sorted(runs)
        self._con: Any = None
        self._duck: Optional[duckdb.DuckDBPyConnection] = None

    def _committed(self, ref: str) -> bool:
        return is_run_id(ref) and not os.path.exists(ref) and self.wh.has_run(ref)

    def holds(self, run_id: str) -> bool:
        return run_id in self.runs

    @property
    def con(self) -> Any:
        """The report engine's connection (DuckDB, or Spark with --engine spark)."""
        if self._con is None:
            self._con = engines.connect(self.wh, self.runs, self.engine, self.master)
            if self.relabels:                   # the labels as corrected (`laya-cases relabel`): views only
                apply_relabels(self.wh, self._con)
        return self._con

    @property
    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """DuckDB over the same runs: the JSON stream and the HTML read through DuckDB whatever the engine."""
        if self.engine == engines.DEFAULT:
            return self.con
        if self._duck is None:
            self._duck = sqlfiles.connect(self.wh, self.runs)
        return self._duck

    def document(self, with_cases: bool) -> Tuple[Dict[str, Any], List[str]]:
        """(document, warnings) of the run. The case list is the big part of a report: built only
        `with_cases` (for a gate that reads it; the JSON file streams its cases). Raises UsageError."""
        options = dataclasses.replace(self.options, include_cases=with_cases)
        try:
            doc = R.build(self.con, self.run_id, options)
            return doc, score_within_warnings(self.con, self.run_id, doc, options)
        except duckdb.Error as exc:          # a page that does not decode: the footer check cannot see it
            raise UsageError("cannot read run %r: %s (see `laya-cases check`)"
                             % (self.run_id, str(exc).splitlines()[0])) from None

    def baseline_report(self, run_id: str) -> Dict[str, Any]:
        """What a baseline compares of a run this session holds: the published metrics and the cases."""
        return R.build(self.con, run_id, R.Options(score_within=self.options.score_within))
