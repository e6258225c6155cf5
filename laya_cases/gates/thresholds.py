"""Threshold gates (S6.3): --min/--max limits over the candidate's overall metrics."""
from __future__ import annotations

from typing import Dict, List

import duckdb
import pyarrow as pa

from laya_cases.query import sql as sqlfiles
from laya_cases.gates.messages import THRESHOLD_LINES
from laya_cases.gates.tables import register


def check_thresholds(con: duckdb.DuckDBPyConnection, mins: Dict[str, float], maxs: Dict[str, float]) -> List[str]:
    """S6.3 over the candidate's overall metrics already in `gate_metrics`."""
    limits = [("min", name, bound) for name, bound in mins.items()] + [("max", name, bound) for name, bound in maxs.items()]
    register(con, "gate_limits", {"pos": (pa.int64(), list(range(1, len(limits) + 1))),
                                   "kind": (pa.string(), [x[0] for x in limits]),
                                   "metric": (pa.string(), [x[1] for x in limits]),
                                   "bound": (pa.float64(), [float(x[2]) for x in limits])})
    return [THRESHOLD_LINES[row["failure"]](row) for row in sqlfiles.rows(sqlfiles.query(con, "gates/thresholds.sql"))]
