"""Report documents flattened into the small DuckDB tables every gate query reads.

    gate_metrics(side, dim, key, metric, value)   every numeric metric of overall and slices
    gate_cases(side, case_no, qid, paired)         one row per case, in report order
    gate_case_keys(side, case_no, dim, key)        the slice groups a case is in (S4.1)
    gate_case_scores(side, case_no, metric, score) its finite per-case scores
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import duckdb
import pyarrow as pa

from laya_cases.query import sql as sqlfiles
from laya_cases.query.engines import connect_tables
from laya_cases.gates.inputs import DIMENSIONS, finite_number


def number(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:                     # an integer beyond binary64
        return math.inf if value > 0 else -math.inf


def register(con: duckdb.DuckDBPyConnection, name: str, columns: Dict[str, Tuple[pa.DataType, List[Any]]]) -> None:
    table = pa.table({col: pa.array(values, type=kind) for col, (kind, values) in columns.items()})
    con.register(name, table)


def connect(engine: str = "duckdb", master: Optional[str] = None) -> duckdb.DuckDBPyConnection:
    """An empty connection for the gate tables: DuckDB in memory, or another engine's (laya_cases/engines)."""
    if engine != "duckdb":
        return connect_tables(engine, master)
    con = duckdb.connect()
    sqlfiles.prepare_connection(con)
    return con


def load_report_tables(con: duckdb.DuckDBPyConnection, sides: Dict[str, Optional[Dict[str, Any]]], *,
                       cases: bool = True) -> None:
    """Flatten report-shaped documents ({"overall", "slices", "cases"}) into the gate tables.

    Only int/float values are metrics (a bool is not); NaN and infinities are kept so a query can
    say so. Slice keys are Python str() of case values (S4.1), a tag group counted once per case.
    Only the policy reads the case tables: `cases=False` leaves them empty.
    """
    m = {"side": [], "dim": [], "key": [], "metric": [], "value": []}
    c = {"side": [], "case_no": [], "qid": [], "paired": []}
    k = {"side": [], "case_no": [], "dim": [], "key": []}
    s = {"side": [], "case_no": [], "metric": [], "score": []}

    def metric(side, dim, key, name, value):
        if type(value) in (int, float):
            for col, v in zip(("side", "dim", "key", "metric", "value"), (side, dim, key, name, number(value))):
                m[col].append(v)

    for side, doc in sides.items():
        if not isinstance(doc, dict):
            continue
        overall = doc.get("overall")
        for name, value in (overall.items() if isinstance(overall, dict) else ()):
            metric(side, "overall", "", name, value)
        slices = doc.get("slices")
        for dim in DIMENSIONS:
            groups = slices.get(dim) if isinstance(slices, dict) else None
            for key, group in (groups.items() if isinstance(groups, dict) else ()):
                for name, value in (group.items() if isinstance(group, dict) else ()):
                    metric(side, dim, key, name, value)
        listed = doc.get("cases") if cases else None
        for no, case in enumerate(listed if isinstance(listed, list) else []):
            if not isinstance(case, dict):
                c["side"].append(side), c["case_no"].append(no), c["qid"].append(None), c["paired"].append(False)
                continue
            qid = case.get("qid")
            c["side"].append(side), c["case_no"].append(no)
            c["qid"].append(None if qid is None else str(qid))
            c["paired"].append(finite_number(case.get("confidence")) and isinstance(case.get("correct"), bool))
            for dim in DIMENSIONS:
                if dim == "tag":
                    tags = case.get("tags")
                    keys = {str(t) for t in (tags if isinstance(tags, (list, tuple)) else []) if t is not None}
                else:
                    keys = set() if case.get(dim) is None else {str(case.get(dim))}
                for key in sorted(keys):
                    k["side"].append(side), k["case_no"].append(no), k["dim"].append(dim), k["key"].append(key)
            scores = case.get("scores")
            for name, score in (scores.items() if isinstance(scores, dict) else ()):
                if finite_number(score):
                    s["side"].append(side), s["case_no"].append(no), s["metric"].append(name)
                    s["score"].append(float(score))
    S, D, I, B = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    register(con, "gate_metrics", {"side": (S, m["side"]), "dim": (S, m["dim"]), "key": (S, m["key"]),
                                    "metric": (S, m["metric"]), "value": (D, m["value"])})
    register(con, "gate_cases", {"side": (S, c["side"]), "case_no": (I, c["case_no"]), "qid": (S, c["qid"]),
                                  "paired": (B, c["paired"])})
    register(con, "gate_case_keys", {"side": (S, k["side"]), "case_no": (I, k["case_no"]), "dim": (S, k["dim"]),
                                      "key": (S, k["key"])})
    register(con, "gate_case_scores", {"side": (S, s["side"]), "case_no": (I, s["case_no"]),
                                        "metric": (S, s["metric"]), "score": (D, s["score"])})
