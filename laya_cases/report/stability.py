"""`laya-cases stability RUN RUN ...`: how much K runs of one dataset disagree case by case (reruns with
another seed, device, batch size, a quantized copy, another server).

Every number is SQL in sql/stability/ (per case: agreement, the share right, unstable or not; per group:
the unstable rate, the mean agreement, the accuracy range a single run could have shown) and the gate
is sql/gates/unstable_rate.sql. The runs must share their labelled rows and questions (runset.check).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as S
from laya_cases.report import build as R
from laya_cases.report import runset
from laya_cases.report.audit import apply_relabels

SCHEMA = "laya-cases-stability/1"
TABLES = ("stability/case_runs.sql", "stability/cases.sql", "stability/slice_cases.sql",
          "stability/run_accuracy.sql")
SUMMARY_KEYS = ("cases", "compared", "unstable", "unstable_rate", "disagreeing", "failed_cases", "mean_agreement",
                "accuracy_mean", "accuracy_sd", "expected_low", "expected_high", "accuracy_floor",
                "accuracy_ceiling", "run_min", "run_max", "delta_noise")


def check_rate(max_unstable_rate: Optional[float]) -> None:
    if max_unstable_rate is not None and not 0.0 <= max_unstable_rate <= 1.0:
        raise UsageError("--max-unstable-rate must be a number in [0, 1], got %r" % (max_unstable_rate,))


def tables(con, run_ids: Sequence[str], by: Optional[str]) -> None:
    """The stability tables on a connection over the runs (S.connect(wh, run_ids)): stability_case_runs,
    stability_cases, stability_slice_cases, stability_run_accuracy."""
    params = {"runs": list(run_ids), "dim": by}
    for path in TABLES:
        S.materialize(con, path, "stability_" + path.split("/")[1][:-4],
                      {p: params[p] for p in S.header_params(path)})


def stability(wh, run_ids: Sequence[str], *, by: Optional[str] = None,
              max_unstable_rate: Optional[float] = None, relabels: bool = False) -> Dict[str, Any]:
    """The stability document: {"schema", "runs", "by", "overall": {...}, "slices": {by: {key: {...}}},
    "run_accuracy": {"overall" | "<dim>=<key>": [{run_id, scored, hits, accuracy}]}, "unstable_cases": [...],
    "gate": {"max_unstable_rate", "failures"}}."""
    run_ids = list(run_ids)
    runset.named(run_ids, "stability")
    if by is not None and by not in R.DIMENSIONS:
        raise UsageError("--by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
    check_rate(max_unstable_rate)
    runset.same_dataset(wh, run_ids, "stability")
    con = S.connect(wh, run_ids)
    try:
        if relabels:
            apply_relabels(wh, con)
        tables(con, run_ids, by)
        summary = S.rows(S.query(con, "stability/summary.sql"))
        accuracy = S.rows(S.query(con, "stability/run_accuracy_rows.sql"))
        unstable = S.rows(S.query(con, "stability/unstable.sql"))
        failures = gate(con, summary, max_unstable_rate)
    finally:
        con.close()
    doc: Dict[str, Any] = {"schema": SCHEMA, "runs": run_ids, "by": by, "relabels": relabels, "overall": None,
                           "slices": {by: {}} if by else {}, "run_accuracy": {}, "unstable_cases": [],
                           "gate": {"max_unstable_rate": max_unstable_rate, "failures": failures}}
    for row in summary:
        entry = {k: row[k] for k in SUMMARY_KEYS}
        if row["dim"] == "overall":
            doc["overall"] = entry
        else:
            doc["slices"][row["dim"]][row["key"]] = entry
    for row in accuracy:
        place = doc["run_accuracy"].setdefault("overall" if row["dim"] == "overall" else
                                               "%s=%s" % (row["dim"], row["key"]), [])
        place.append({k: row[k] for k in ("run_id", "scored", "hits", "accuracy")})
    doc["unstable_cases"] = [dict(r, expected=_json(r.pop("expected_json"))) for r in unstable]
    return doc


def gate(con, summary: List[Dict[str, Any]], bound: Optional[float]) -> List[str]:
    """FAIL lines of --max-unstable-rate (sql/gates/unstable_rate.sql over the summary rows)."""
    if bound is None:
        return []
    import pyarrow as pa

    con.register("stability_summary", pa.Table.from_pylist(
        [{"dim": r["dim"], "key": r["key"], "compared": r["compared"], "unstable": r["unstable"],
          "unstable_rate": r["unstable_rate"]} for r in summary],
        schema=pa.schema([("dim", pa.string()), ("key", pa.string()), ("compared", pa.int64()),
                          ("unstable", pa.int64()), ("unstable_rate", pa.float64())])))
    out = []
    for row in S.rows(S.query(con, "gates/unstable_rate.sql", {"max_unstable_rate": bound})):
        if row["failure"] == "missing":
            out.append("unstable rate is missing: no case is scored by two of the runs")
        else:
            out.append("unstable rate %.4f (%d of %d compared cases) is above the maximum %.4f"
                       % (row["value"], row["unstable"], row["compared"], row["bound"]))
    return out


def _json(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


# ---------------------------------------------------------------------------- text
COLUMNS = ("group", "cases", "compared", "unstable", "unstable rate", "disagreeing", "agreement", "failed")
RANGE_COLUMNS = ("group", "accuracy", "expected low", "expected high", "floor", "ceiling", "run min", "run max")


def _groups(doc: Dict[str, Any]) -> List[tuple]:
    """(name, entry): overall, then each group of --by in key order."""
    entries = [("overall", doc["overall"])] if doc["overall"] else []
    return entries + [("%s=%s" % (doc["by"], key), e) for key, e in sorted((doc["slices"].get(doc["by"]) or {}).items())]


def table_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    return [[name, e["cases"], e["compared"], e["unstable"], e["unstable_rate"], e["disagreeing"],
             e["mean_agreement"], e["failed_cases"]] for name, e in _groups(doc)]


def range_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    """The accuracy a single run could have shown, per group."""
    return [[name, e["accuracy_mean"], e["expected_low"], e["expected_high"], e["accuracy_floor"],
             e["accuracy_ceiling"], e["run_min"], e["run_max"]] for name, e in _groups(doc)]


CASE_COLUMNS = ("row", "line", "qid", "expected", "right", "agreement", "answers (run order)")


def case_rows(doc: Dict[str, Any], show: int) -> List[List[Any]]:
    return [[c["row_index"], c["line_no"], c["qid"], json.dumps(c["expected"], ensure_ascii=False),
             "%d/%d" % (c["n_correct"], c["n_scored"]), c["agreement"],
             " ".join("-" if p is None else p for p in c["predictions"])]
            for c in doc["unstable_cases"][:show]]


def header(doc: Dict[str, Any]) -> str:
    return ("%d runs of one dataset compared case by case%s; a case is unstable when some runs got it right "
            "and others wrong" % (len(doc["runs"]), " (relabels applied)" if doc["relabels"] else ""))
