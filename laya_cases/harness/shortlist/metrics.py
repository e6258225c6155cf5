"""The shortlist/tournament metrics a report adds for runs of those two schemas (S7.19, S7.20).

Ordinary runs get nothing from here (their reports and the goldens are unchanged): which file runs
is decided by the run's config schema, read from the store (sql/shortlist/schema.sql).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from laya_cases.query import sql as sqlfiles
from laya_cases.harness.shortlist import SHORTLIST_SCHEMA, TOURNAMENT_SCHEMA

FILES = {SHORTLIST_SCHEMA: ("shortlist/shortlist.sql", ("shortlist_recall_at_k", "shortlist_accuracy_on_recalled")),
         TOURNAMENT_SCHEMA: ("shortlist/tournament.sql",
                             ("tournament_survival_rate", "tournament_accuracy_on_survivors"))}


def collect(con, run_id: str) -> Tuple[List[str], List[Dict[str, Any]]]:
    """(metric names, result rows with dim, key, metric, value, n, hits) for the run; empty for others."""
    found = sqlfiles.rows(sqlfiles.query(con, "shortlist/schema.sql", {"run_id": run_id}))
    entry = FILES.get(found[0]["schema"]) if found else None
    if entry is None:
        return [], []
    path, names = entry
    return list(names), sqlfiles.rows(sqlfiles.query(con, path, {"run_id": run_id}))
