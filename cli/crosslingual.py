"""`laya-cases crosslingual RUN`: cross-lingual consistency of a parallel run (laya_cases.harness.crosslingual)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE

_LANG_COLS = [("lang", "lang"), ("n", "n"), ("accuracy", "acc"), ("agreement", "agree"),
              ("acc_on_pivot_right", "acc|pivot ok"), ("acc_on_pivot_wrong", "acc|pivot wrong"),
              ("errors", "errors"), ("error_share_on_pivot_right", "err on pivot ok"),
              ("pivot_right_rate", "base rate"), ("error_excess", "excess")]
_ITEM_COLS = [("item_id", "item"), ("qid", "qid"), ("gold", "gold"), ("right", "right"), ("languages", "langs"),
              ("share_right", "share"), ("pivot_right", "pivot"), ("distinct_predictions", "labels"),
              ("wrong_langs", "wrong in")]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "%.4f" % value
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _rows(doc: Dict[str, Any], by: str):
    cols = _LANG_COLS if by == "language" else _ITEM_COLS
    rows = doc["languages"] if by == "language" else doc["items"]
    cells = [[_cell(r[k]) + ("*" if k == "error_excess" and r.get("concentrated") else "") for k, _ in cols]
             for r in rows]
    return [title for _, title in cols], cells


def summary_line(doc: Dict[str, Any]) -> str:
    s = doc["summary"]
    return ("run %s pivot=%s items=%d languages=%d all_right=%s none_right=%s mean_share_right=%s "
            "(complete items %d)" % (doc["run_id"], doc["pivot"], s["items"], s["languages"],
                                     _cell(s["all_right_rate"]), _cell(s["none_right_rate"]),
                                     _cell(s["mean_share_right"]), s["complete_items"]))


def text(doc: Dict[str, Any], by: str) -> List[str]:
    head, cells = _rows(doc, by)
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(head)]
    lines = [summary_line(doc), "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    if by == "language":
        lines.append("* errors concentrate on items %s gets right (excess = share of errors there - base rate)"
                     % doc["pivot"])
    else:
        lines.append("%d of %d items listed, least consistent first" % (len(doc["items"]), doc["items_total"]))
    return lines


def markdown(doc: Dict[str, Any], by: str) -> str:
    head, cells = _rows(doc, by)
    lines = [summary_line(doc), "", "| %s |" % " | ".join(head), "|%s" % ("---|" * len(head))]
    lines += ["| %s |" % " | ".join(c.replace("|", "\\|") for c in row) for row in cells]
    return "\n".join(lines) + "\n"


@app.command("crosslingual", short_help="Cross-lingual consistency of a parallel run.")
def crosslingual_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run over a parallel dataset (rows carry item_id)."),
    by: str = typer.Option("language", "--by", metavar="language|item", help="language: per-language agreement "
                           "with the pivot and error concentration; item: the least consistent items."),
    pivot: str = typer.Option("en", "--pivot", metavar="LANG", help="The reference language (a language_key)."),
    limit: int = typer.Option(20, "--limit", metavar="N", help="--by item: list at most N items (0: all)."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the whole document "
                                            "(summary, languages, items up to --limit) as JSON here."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE",
                                                help="Write the --by table as Markdown here."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Cross-lingual consistency of one run: per item, the share of languages right; the rates of items
    right in every language and in none; per language, agreement of the predicted label with the pivot
    and accuracy on the items the pivot gets right and wrong (docs/crosslingual.md).

    \b
    Examples:
      laya-cases massive run --model minilm --langs en,de,fr --per-lang 50 --data DIR --run-id xl
      laya-cases crosslingual xl --by item --limit 10
    """
    from laya_cases.harness import crosslingual as X

    if by not in X.BY:
        raise UsageError("--by must be language or item, got %r" % by)
    doc = X.report(warehouse_of(warehouse), run_id, pivot, None if limit == 0 else limit)
    for line in text(doc, by):
        console.out(line)
    write_text(json_out, json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n", "JSON")
    write_text(markdown_out, markdown(doc, by), "Markdown")
