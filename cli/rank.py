"""`laya-cases rank`: runs of one dataset ranked per metric with paired-bootstrap intervals and tie groups
(laya_cases/report/rank.py; docs/report.md "Ranking runs")."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE


@app.command(short_help="Rank runs of one dataset, with intervals and ties.")
def rank(
    runs: List[str] = typer.Argument(..., metavar="RUN...", help="Two or more runs of the same dataset."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="Also rank per group of DIM: language, "
                                     "model, qid or tag."),
    bootstrap: int = typer.Option(1000, "--bootstrap", metavar="B", help="Bootstrap replicates, 100..100000."),
    seed: int = typer.Option(0, "--seed", metavar="S", help="Bootstrap seed (CPython random.Random(seed))."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the ranks as JSON here."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE",
                                                help="Write the ranks as Markdown tables here."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Write the ranks as one "
                                            "self-contained HTML file here (no script)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Rank runs of one dataset per metric: which model is better, and which are tied?

    Every run is resampled over the same dataset rows (a paired bootstrap), so each replicate ranks
    the runs on the same cases. Per metric with an interval (the accuracies, selective accuracy),
    overall and per --by group: each run's value with its interval, its rank with a rank interval,
    and tie groups: a run joins the group above when its difference from that group's first run is
    not significant.

    \b
    Examples:
      laya-cases rank minilm int8 use --by language
      laya-cases rank a b c --bootstrap 2000 --json ranks.json --html ranks.html
    """
    from laya_cases.report import rank as K
    from laya_cases_cli.progress import StepProgress

    with StepProgress() as bars:
        doc = K.rank(warehouse_of(warehouse), runs, by=by, bootstrap=bootstrap, seed=seed,
                     progress=bars.step("rank: runs resampled", "runs"))
    width, color = console.terminal()
    console.out(K.header(doc))
    for title, rows in K.cells(doc):
        console.out("")
        console.out(title)
        console.out(console.render([console.result_table(K.COLUMNS, K.table_rows(rows))], width, color).rstrip("\n"))
    if json_out is not None:
        write_text(json_out, json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "rank")
    write_text(markdown_out, K.markdown(doc), "rank markdown")
    if html_out is not None:
        from laya_cases.views.html.runset_view import rank_html
        write_text(html_out, rank_html(doc), "rank HTML")
