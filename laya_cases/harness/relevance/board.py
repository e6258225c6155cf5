"""The leaderboard view: models ranked by macro F1 with a bootstrap interval for the F1 and the rank, and
rank groups of models whose F1 difference is not significant (docs/relevance.md, "Leaderboard").

Rule: only the languages every selected model has a run for are used (each model's F1 is the macro over
them), and every language's runs must hold the same items (equal benchmark SHA-256, checked when the
tables are built). The items of each language are resampled 2000 times (CPython random.Random(0),
S9.5 stream over the language's items in dataset order); every replicate applies the same draws to
every model, so the F1 differences are paired. A pair differs significantly when the 95% percentile
interval of its F1 difference excludes 0. Models are ordered by point macro F1 (then model_id); the
first model opens group 1; each next model joins the current group when its difference to that
group's first model is not significant, else it opens the next group.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as S
from laya_cases.report.rank import groups
from laya_cases.store.warehouse import Warehouse
from laya_cases.harness.relevance import metrics

COLUMNS = ("group", "position", "model_id", "f1_macro", "f1_ci_low", "f1_ci_high", "rank_ci_low", "rank_ci_high",
           "tied_with", "languages", "n_items")


def _restrict(con) -> List[str]:
    """Keep the items of the languages every model has; returns those languages."""
    have: Dict[str, set] = {}
    for model, lang in con.execute("SELECT model_id, language FROM rel_runs").fetchall():
        have.setdefault(model, set()).add(lang)
    common = sorted(set.intersection(*have.values()))
    if not common:
        raise UsageError("the selected models share no language; the leaderboard compares models on the same items")
    con.execute("DELETE FROM rel_items WHERE NOT list_contains($langs, language)", {"langs": common})
    return common


def leaderboard(wh: Warehouse, run_ids: Optional[Sequence[str]] = None,
                replicates: int = metrics.REPLICATES) -> Dict[str, Any]:
    con = metrics.connect(wh, run_ids)
    langs = _restrict(con)
    point = S.rows(S.query(con, "relevance/board.sql"))
    models = [r["model_id"] for r in point]                     # index k = position in model_id order, 1-based
    metrics.intervals(con, "relevance/rank_values.sql", "rel_board_ci")
    ci = {(r["run_id"], r["metric"]): (r["lower"], r["upper"])
          for r in S.rows(con.execute("SELECT run_id, metric, lower, upper FROM rel_board_ci"))}
    index = {m: i + 1 for i, m in enumerate(models)}

    def significant(a: str, b: str) -> bool:
        i, j = sorted((index[a], index[b]))
        low, high = ci.get(("%d-%d" % (i, j), "f1_diff"), (None, None))
        return low is not None and (low > 0 or high < 0)

    order = [r["model_id"] for r in sorted(point, key=lambda r: (-r["f1_macro"], r["model_id"]))]
    group = groups(order, significant)
    rows = []
    for pos, model in enumerate(order, 1):
        r = next(p for p in point if p["model_id"] == model)
        k = str(index[model])
        f1 = ci.get((k, "f1"), (None, None))
        rank = ci.get((k, "rank"), (None, None))
        tied = [m for m in order if m != model and not significant(model, m)]
        rows.append({"group": group[model], "position": pos, "model_id": model, "f1_macro": r["f1_macro"],
                     "f1_ci_low": f1[0], "f1_ci_high": f1[1], "rank_ci_low": rank[0], "rank_ci_high": rank[1],
                     "tied_with": " ".join(tied), "languages": r["language_count"], "n_items": r["n_items_total"]})
    return {"languages": langs, "replicates": replicates, "rows": rows}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.4f" % value
    return str(value).replace("|", "\\|")


def markdown(board: Dict[str, Any]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in board["rows"]:
        lines.append("| " + " | ".join(_cell(row[c]) for c in COLUMNS) + " |")
    lines.append("")
    lines.append("Languages: %s. 95%% intervals from %d paired item resamples (random.Random(0)); models in one "
                 "group do not differ significantly in F1 from the group's first model."
                 % (", ".join(board["languages"]), board["replicates"]))
    return "\n".join(lines) + "\n"
