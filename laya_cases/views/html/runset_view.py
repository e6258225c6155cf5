"""The HTML files of the commands over several runs: `stability`, `audit`, `rank` and `calibrate` with
`--html FILE`.

Each page shows the tables the terminal prints, built from the same rows (report/stability.py,
audit.py, rank.py, calibration.py), so a page and the terminal cannot disagree; every number carries
its exact value in `data-v`, as in the report file, to be checked against the command's `--json`.
One document, no script, no external resource, the same bytes for the same document.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from laya_cases.report import audit as A
from laya_cases.report import calibration as C
from laya_cases.report import rank as K
from laya_cases.report import stability as T
from laya_cases.views.html.markup import cell, esc, page, table

#: (heading, column names, rows of values) of one table
Section = Tuple[str, Sequence[str], List[List[Any]]]


def _sections(sections: Sequence[Section]) -> str:
    """Each table under its heading (markup.table boxes it: a narrow window never scrolls the page)."""
    return "".join("<h2>%s</h2>%s" % (
        esc(heading), table(columns, [[cell(v) for v in row] for row in rows]) if rows else "<p>None.</p>")
        for heading, columns, rows in sections)


def _intro(text: str) -> str:
    return "<p>%s.</p>" % esc(text)


def stability_html(doc: Dict[str, Any]) -> str:
    """`stability --html`: the per-group table, the accuracy range, each run's accuracy, every
    unstable case (the terminal prints the first --show), and the gate's verdict."""
    runs = [[r["run_id"], r["scored"], r["hits"], r["accuracy"]] for r in doc["run_accuracy"].get("overall", [])]
    body = _intro(T.header(doc)) + _sections([
        ("Per group", T.COLUMNS, T.table_rows(doc)),
        ("Accuracy a single run could show", T.RANGE_COLUMNS, T.range_rows(doc)),
        ("Accuracy of each run over the compared cases", ("run", "scored", "hits", "accuracy"), runs),
        ("Unstable cases", T.CASE_COLUMNS, T.case_rows(doc, len(doc["unstable_cases"])))])
    gate = doc["gate"]
    if gate["max_unstable_rate"] is not None:
        body += "<h2>Gate</h2>" + ("".join("<p>FAIL: %s</p>" % esc(f) for f in gate["failures"]) or
                                   "<p>PASS: unstable rate at most %s.</p>" % esc(gate["max_unstable_rate"]))
    return page("laya-cases stability: %s" % ", ".join(doc["runs"]), body)


def audit_html(doc: Dict[str, Any]) -> str:
    """`audit --html`: the queue with the counts behind every score (the CSV's columns)."""
    return page("laya-cases audit: %s" % ", ".join(doc["runs"]),
                _intro(A.header(doc)) + _sections([("Review queue", A.CSV_COLUMNS[:-2], A.review_rows(doc))]))


def rank_html(doc: Dict[str, Any]) -> str:
    """`rank --html`: one table per metric, overall and per group."""
    return page("laya-cases rank: %s" % ", ".join(doc["runs"]),
                _intro(K.header(doc)) + _sections([(title, K.COLUMNS, K.table_rows(rows))
                                                   for title, rows in K.cells(doc)]))


def _fit_rows(groups: List[Dict[str, Any]]) -> List[List[Any]]:
    return [[g["group"], g["method"], g["n"], g.get("temperature"), g.get("at_bound"), g.get("a"), g.get("b"),
             g.get("separable"), g["nll_before"], g["nll_after"]] for g in groups]


def _bins(bins: List[Dict[str, Any]]) -> List[List[Any]]:
    return [[b["bin"], b["lower"], b["upper"], b["n_b"], b["mean_confidence"], b["accuracy"], b["gap"],
             "too small" if b["too_small"] else ""] for b in bins if b["n_b"]]


def calibration_html(doc: Dict[str, Any]) -> str:
    """`calibrate --html`: the fit, what each bucket of the scored run got, the metrics before and
    after (ECE equal-width, equal-mass and class-wise among them), and both reliability tables, the
    bins too small to read marked."""
    fit, scored = doc["fit"], doc["apply"]
    metrics = [[name, scored["before"][key], scored["after"][key],
                None if scored["before"][key] is None or scored["after"][key] is None
                else scored["after"][key] - scored["before"][key]] for key, name in C.METRICS]
    bins = ("bin", "lower", "upper", "n", "confidence", "accuracy", "gap", "")
    body = _intro("fitted on run %s (%d of %d paired cases usable), scored on run %s (%d of %d)" % (
        doc["fit_run"], fit["cases"]["usable"], fit["cases"]["paired"], doc["apply_run"],
        scored["cases"]["usable"], scored["cases"]["paired"])) + _sections([
            ("Fit on %s" % doc["fit_run"], ("group", "method", "n", "temperature", "at bound", "platt a", "platt b",
                                            "separable", "nll before", "nll after"), _fit_rows(fit["groups"])),
            ("Applied to %s" % doc["apply_run"], ("bucket", "answer type", "fitted on", "temperature", "platt a",
                                                  "platt b"),
             [[r["bucket"], r["answer_type"], r["fitted_on"], r["temperature"], r["platt_a"], r["platt_b"]]
              for r in scored["applied"]]),
            ("Before and after", ("metric", "before", "after", "change"), metrics),
            ("Reliability after (15 bins; too small: fewer than 10 cases)", bins, _bins(scored["reliability"]["after"])),
            ("Reliability before", bins, _bins(scored["reliability"]["before"]))])
    return page("laya-cases calibrate: %s -> %s" % (doc["fit_run"], doc["apply_run"]), body)
