"""`laya-cases audit` and `laya-cases relabel`: a queue of cases whose gold label is likely wrong, and the
accepted corrections, kept in the store beside the runs (store/relabels.py) and applied only on request.

The queue is sql/audit/queue.sql over runs of one dataset (runset.check): a case ranks high when many runs
(different models) got it wrong with one and the same other label, confidently. A relabel names a case of
a committed run by dataset row and question; it is checked against the question (a choice label among the
options, a noul label true or false) and recorded with the label it replaces. `apply_relabels` makes a
connection's `cases` view read the relabelled labels and correctness (sql/audit/relabelled_cases.sql).
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Dict, List, Optional, Sequence

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as S
from laya_cases.report import runset
from laya_cases.store import relabels as store_relabels

MAX_RUNS = 100
CSV_COLUMNS = ("rank", "row_index", "line_no", "qid", "language", "expected", "suggested", "score", "n_runs",
               "n_wrong", "n_agree", "agree_share", "n_confident", "mean_confidence", "agreeing_runs",
               "case_id", "accept", "note")


def apply_relabels(wh, con) -> int:
    """Make `cases` and `slice_sets` on this DuckDB connection (S.connect over some runs) read the store's
    relabels: labels, correctness and the slice sets that encode it (sql/audit/relabel_changes.sql);
    returns how many relabels the store holds. The committed files are untouched: these are views."""
    import pyarrow as pa

    if not isinstance(con, duckdb.DuckDBPyConnection):
        raise UsageError("--relabels is read by the DuckDB engine only")
    rows = store_relabels.read(wh)
    con.register("relabels", pa.Table.from_pylist(rows, schema=store_relabels.schema()))
    con.execute("ALTER VIEW cases RENAME TO cases_as_committed")
    con.execute("ALTER VIEW slice_sets RENAME TO slice_sets_as_committed")
    S.materialize(con, "audit/relabel_changes.sql", "relabel_changes")
    con.execute("CREATE VIEW cases AS %s" % S.text("audit/relabelled_cases.sql"))
    con.execute("CREATE VIEW slice_sets AS %s" % S.text("audit/relabelled_slice_sets.sql"))
    return len(rows)


def queue(wh, run_ids: Sequence[str], *, top: int = 20, min_agree: int = 2,
          relabels: bool = False) -> Dict[str, Any]:
    """{"runs", "top", "min_agree", "relabels", "cases": [rows of sql/audit/queue.sql]}."""
    run_ids = list(run_ids)
    runset.named(run_ids, "audit", MAX_RUNS)
    if top < 1:
        raise UsageError("--top must be >= 1, got %d" % top)
    if min_agree < 1:
        raise UsageError("--min-agree must be >= 1, got %d" % min_agree)
    runset.same_dataset(wh, run_ids, "audit")
    con = S.connect(wh, run_ids)
    try:
        if relabels:
            apply_relabels(wh, con)
        S.materialize(con, "stability/case_runs.sql", "stability_case_runs", {"runs": run_ids})
        rows = S.rows(S.query(con, "audit/queue.sql", {"min_agree": min_agree, "top": top}))
    finally:
        con.close()
    cases = [dict(r, expected=_json(r.pop("expected_json"))) for r in rows]
    return {"runs": run_ids, "top": top, "min_agree": min_agree, "relabels": relabels, "cases": cases}


#: the terminal's and the HTML page's columns of the queue
COLUMNS = ("rank", "row", "line", "qid", "expected", "suggested", "score", "agree", "confidence")


def table_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    """The queue as the columns of COLUMNS (the expected label as its JSON, agreement as k/n)."""
    return [[c["rank"], c["row_index"], c["line_no"], c["qid"], json.dumps(c["expected"], ensure_ascii=False),
             c["suggested"], c["score"], "%d/%d" % (c["n_agree"], c["n_runs"]), c["mean_confidence"]]
            for c in doc["cases"]]


def header(doc: Dict[str, Any]) -> str:
    return "%d case(s) that %d or more of %d runs got wrong with the same label%s" % (
        len(doc["cases"]), doc["min_agree"], len(doc["runs"]), " (relabels applied)" if doc["relabels"] else "")


def review_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    """The queue as the CSV's columns before `accept` and `note` (numbers as numbers; the CSV and the
    HTML page both show these)."""
    return [[c["rank"], c["row_index"], c["line_no"], c["qid"], c["language_key"] or "",
             json.dumps(c["expected"], ensure_ascii=False), c["suggested"], c["score"], c["n_runs"], c["n_wrong"],
             c["n_agree"], c["agree_share"], c["n_confident"], c["mean_confidence"], " ".join(c["agreeing_runs"]),
             c["case_id"]] for c in doc["cases"]]


def to_csv(doc: Dict[str, Any]) -> str:
    """The queue for a reviewer: one row per case, with empty `accept` and `note` columns to fill in."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in review_rows(doc):
        writer.writerow([_num(v) if isinstance(v, float) or v is None else v for v in row] + ["", ""])
    return out.getvalue()


def _num(value: Optional[float]) -> str:
    return "" if value is None else repr(value)


def _json(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


def relabel(wh, run_id: str, row_index: int, qid: str, label: str, note: str = "") -> Dict[str, Any]:
    """Record that the gold label of (row_index, qid) in the dataset of `run_id` is `label`; returns the
    relabel row. `label` is the choice label as written, or `true`/`false` for a noul question."""
    row = runset.same_dataset(wh, [wh.require_run(run_id)], "relabel")[run_id]
    con = S.connect(wh, [run_id])
    try:
        found = S.rows(S.query(con, "audit/case.sql", {"run_id": run_id, "row_index": row_index, "qid": qid}))
    finally:
        con.close()
    if not found:
        raise UsageError("run %s has no case at row %d, question %r (a failed row has none)" % (run_id, row_index, qid))
    case = found[0]
    to_json = _label_json(case, label)
    if to_json == case["expected_json"]:
        raise UsageError("row %d %s: the label is already %s" % (row_index, qid, to_json))
    return store_relabels.add(wh, [{
        "labelled_rows_sha256": row["labelled_rows_sha256"], "questions_sha256": row["questions_sha256"],
        "case_id": case["case_id"], "row_index": case["row_index"], "line_no": case["line_no"], "qid": qid,
        "from_json": case["expected_json"], "to_json": to_json, "note": note, "source_run": run_id}])[0]


def _label_json(case: Dict[str, Any], label: str) -> str:
    kind = case["question_type"]
    if kind == "choice":
        if label not in (case["options"] or []):
            raise UsageError("row %d %s: %r is not one of the question's labels (%s)"
                             % (case["row_index"], case["qid"], label, ", ".join(case["options"] or [])))
        return json.dumps(label, ensure_ascii=False)
    if kind == "noul":
        if label not in ("true", "false"):
            raise UsageError("row %d %s: a noul label is true or false, got %r" % (case["row_index"], case["qid"], label))
        return label
    raise UsageError("row %d %s: only choice and noul labels can be relabelled (this question is %s)"
                     % (case["row_index"], case["qid"], kind))


def listing(wh) -> List[Dict[str, Any]]:
    return store_relabels.read(wh)
