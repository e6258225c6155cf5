"""`laya-cases shortlist`: retrieval (or a tournament) before the decision, committed and reported (S7.17-S7.20)."""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases.report.request import ReportRequest
from laya_cases_cli import console
from laya_cases_cli.app import app, output_file, warehouse_of
from laya_cases_cli.options import WAREHOUSE, report_options
from laya_cases_cli.store import emit_report


@app.command("shortlist", short_help="Retrieve a shortlist, then decide; commit and report.")
@report_options
def shortlist_command(
    dataset: Path = typer.Argument(..., metavar="DATASET", help="Labelled dataset of choice questions."),
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="The decision model, as for `run` "
                                        "[default: minilm]."),
    k: int = typer.Option(20, "--k", metavar="K", help="Labels kept by retrieval (k >= the label count: "
                          "pass-through, the embedder is not called)."),
    embedder: Optional[str] = typer.Option(None, "--embedder", metavar="E", help="Sentence embedder that ranks "
                                           "the labels: minilm or use-multilingual [default: minilm]."),
    tournament: bool = typer.Option(False, "--tournament", help="No retrieval: the decision model answers the "
                                    "labels in groups of --group-size, winners advance."),
    group_size: int = typer.Option(16, "--group-size", metavar="G", help="Tournament group size (>= 2)."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runners support."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    warehouse: Optional[Path] = WAREHOUSE,
    report: ReportRequest = None,
) -> None:
    """Narrow each choice before the model decides; commit and report the run.

    Retrieval keeps the top --k labels by cosine between the state and each label (ties keep the
    earlier label); the decision model answers on the kept labels. Each case stores the kept labels,
    their scores and its status (correct / retrieval_miss / decision_miss); the report adds
    shortlist_recall_at_k and shortlist_accuracy_on_recalled overall and per slice, while
    choice_accuracy stays end to end. With --tournament: elimination_miss / final_choice_miss,
    tournament_survival_rate and tournament_accuracy_on_survivors. See docs/shortlist.md.

    \b
    Examples:
      laya-cases shortlist banking77.jsonl --model minilm --k 10 --embedder minilm
      laya-cases shortlist banking77.jsonl --model ckpt/ --tournament --group-size 16
    """
    from laya_cases.run.inference import RunnerCrash
    from laya_cases.harness.shortlist.harness import ShortlistOptions, execute
    from laya_cases_cli.progress import RowProgress

    if tournament and embedder is not None:
        raise UsageError("--embedder: a tournament uses no embedder (drop --embedder or --tournament)")
    opts = ShortlistOptions(dataset=str(dataset), model=model, k=k, embedder=embedder or "minilm",
                            tournament=tournament, group_size=group_size, run_id=run_id, device=device)
    options = report.options()
    wh = warehouse_of(warehouse)
    try:
        with RowProgress("shortlist", waiting="loading the models") as bar:
            recorded = execute(wh, opts, progress=bar.update, on_loaded=bar.set_total)
    except RunnerCrash as crash:
        traceback.print_exception(type(crash.exc), crash.exc, crash.exc.__traceback__)
        console.note(str(crash))
        raise typer.Exit(1)
    console.committed(recorded.run_id, wh.root, recorded.n_errors)
    emit_report(wh, recorded.run_id, report, options)


@app.command("banking77", short_help="Write a BANKING77 dataset for `shortlist`.")
def banking77_command(
    out: Path = typer.Option(..., "--out", metavar="FILE", help="Where to write the dataset (JSON Lines)."),
    rows: Optional[int] = typer.Option(None, "--rows", metavar="N", help="At most N rows [default: all 3,080]."),
    every: int = typer.Option(1, "--every", metavar="S", help="Keep every S-th row (the split is sorted by "
                              "intent, 40 rows each: --every 40 gives one row per intent)."),
    source: Optional[Path] = typer.Option(None, "--source", metavar="DIR", help="BANKING77 folder "
                                          "[default: $LAYA_CASES_SHARED/data/banking77]."),
) -> None:
    """Write a BANKING77 dataset for `shortlist` (77-label choice questions).

    \b
    Example:
      laya-cases banking77 --out b77.jsonl --every 40
    """
    from laya_cases.harness.shortlist import banking77

    if rows is not None and rows < 1:
        raise UsageError("--rows must be >= 1, got %d" % rows)
    if every < 1:
        raise UsageError("--every must be >= 1, got %d" % every)
    with output_file(out) as target:
        n = banking77.write(target, source=source, n_rows=rows, every=every)
    console.out("%d examples written to %s" % (n, out))
