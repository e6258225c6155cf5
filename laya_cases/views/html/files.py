"""The self-contained files: `report RUN --html FILE` and `diff A B --html FILE`.

One HTML document, no script, no external resource (fonts, images and plots are inline), the same
bytes for the same run. Cases are summarised (counts per answer type, the most confident wrong
answers), never all embedded, so a large run still gives a small file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.report import build as R
from laya_cases.views.html import diff_view, report_view
from laya_cases.views.html.markup import page
from laya_cases.query.sql import connect

#: wrong answers listed in the file's case summary
CONFIDENT_ERRORS = 25


def case_summary(con, run_id: str, limit: int = CONFIDENT_ERRORS) -> Dict[str, Any]:
    return {"types": sqlfiles.rows(sqlfiles.query(con, "html/case_types.sql", {"run_id": run_id})),
            "confident_errors": sqlfiles.rows(sqlfiles.query(con, "html/confident_errors.sql",
                                                             {"run_id": run_id, "limit": limit}))}


def report_html(doc: Dict[str, Any], summary: Dict[str, Any]) -> str:
    """The report file: a report document (report.build) and its case summary (`case_summary`)."""
    run_id = doc["extensions"]["run"]["run_id"]
    return page("laya-cases report: run %s" % run_id, report_view.sections(doc) + report_view.cases_summary(summary))


def diff_html(d: Dict[str, Any], docs: Optional[Dict[str, Dict[str, Any]]] = None) -> str:
    """The diff file: a diff document (diff.diff), and with `docs` (both runs' report documents, see
    `run_docs`) their reliability and risk-coverage overlaid."""
    charts = report_view.runs_charts(docs) if docs else ""
    return page("laya-cases diff: %s -> %s" % (d["run_a"], d["run_b"]), diff_view.sections(d, charts=charts))


def run_docs(wh, run_ids: List[str]) -> Dict[str, Dict[str, Any]]:
    """Each run's report document without its cases (the numbers behind the charts), in the given order."""
    return {run: R.build(connect(wh, [run]), run, R.Options(include_cases=False)) for run in run_ids}


def write_html(path, text: str, what: str = "HTML report") -> None:
    """Write the file (UTF-8, `\\n` line ends); a failure is one UsageError line."""
    try:
        Path(path).write_bytes(text.encode("utf-8"))
    except OSError as exc:
        raise UsageError("cannot write %s %r: %s" % (what, str(path), exc)) from None


def report_file(wh, run_id: str, doc: Dict[str, Any], con: Any = None) -> str:
    """The HTML report file of a committed run, its case summary read from the store (through `con`, a
    report session's DuckDB connection, else one of its own)."""
    return report_html(doc, case_summary(con if con is not None else connect(wh, [run_id]), run_id))


def save_report(path, wh, run_id: str, doc: Dict[str, Any], con: Any = None) -> None:
    """`report --html FILE`: write report_file."""
    write_html(path, report_file(wh, run_id, doc, con))
