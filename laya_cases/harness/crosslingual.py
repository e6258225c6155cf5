"""Cross-lingual consistency of one run over a parallel dataset (MASSIVE: one item_id, every language).

Every number is SQL in sql/crosslingual/ over the table `xl_cases` (one row per item, question and
language; cases.sql): per item the share of languages that answer it correctly (items.sql), the run's
all-right / none-right rates (summary.sql), and per language the agreement of its predicted label
with the pivot language's, its accuracy on the items the pivot gets right and wrong, and whether
its errors concentrate on the items the pivot gets right (languages.sql). docs/crosslingual.md
defines each number and re-derives them in plain DuckDB.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import sql as S
from laya_cases.query.sql import connect

BY = ("language", "item")
DEFAULT_PIVOT = "en"


def load(con, run_id: str) -> List[str]:
    """Materialise xl_cases for the run; returns its languages (sorted). Refuses a run with no grid."""
    S.materialize(con, "crosslingual/cases.sql", "xl_cases", {"run_id": run_id})
    langs = [r[0] for r in con.execute("SELECT DISTINCT lang FROM xl_cases ORDER BY lang").fetchall()]
    if not langs:
        raise UsageError("run %s has no labelled cases carrying both an item_id and a language: cross-lingual "
                         "consistency needs a parallel run (laya-cases massive run --langs en,de,...)"
                         % shorten(repr(run_id)))
    return langs


def build(con, run_id: str, pivot: str = DEFAULT_PIVOT, limit: Optional[int] = 20) -> Dict[str, Any]:
    """The cross-lingual document of one run: summary, languages and the least consistent items.

    `con` is a warehouse connection over the run (Warehouse.connect([run_id])); `limit` caps the
    items listed (None: all).
    """
    if limit is not None and limit < 0:
        raise UsageError("--limit must be >= 0, got %d" % limit)
    langs = load(con, run_id)
    if pivot not in langs:
        raise UsageError("--pivot %s: not a language of run %s (its languages: %s)"
                         % (shorten(repr(pivot)), shorten(repr(run_id)), ", ".join(langs)))
    items = S.rows(S.query(con, "crosslingual/items.sql", {"pivot": pivot}))
    return {"run_id": run_id, "pivot": pivot,
            "summary": S.rows(S.query(con, "crosslingual/summary.sql"))[0],
            "languages": S.rows(S.query(con, "crosslingual/languages.sql", {"pivot": pivot})),
            "items": items if limit is None else items[:limit], "items_total": len(items)}


def report(wh, run_id: str, pivot: str = DEFAULT_PIVOT, limit: Optional[int] = 20) -> Dict[str, Any]:
    """`build` on a warehouse: the run must be committed and undamaged."""
    wh.require_run(run_id)
    return build(connect(wh, [run_id]), run_id, pivot, limit)
