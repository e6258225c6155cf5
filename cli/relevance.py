"""`laya-cases relevance ...`: the binary relevance benchmark (spec S8; docs/relevance.md)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import _App, app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE

relevance_app = _App(help="The binary relevance benchmark: one run per (model, language), the four "
                          "lrb CSVs, operating points chosen on other runs, and a leaderboard with rank groups "
                          "(docs/relevance.md).\n\n\b\nExamples:\n"
                          "  laya-cases relevance run --manifest data/relevance/xquad_r_relevance.json --model minilm\n"
                          "  laya-cases relevance export --out results/ && laya-cases relevance leaderboard",
                     no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
app.add_typer(relevance_app, name="relevance", short_help="The binary relevance benchmark: runs, CSVs, ranks.")

DATA = typer.Option(None, "--data", metavar="DIR", help="A folder of <language>.jsonl (or test/<language>.jsonl) "
                    "in the stored xquad_r_relevance layout.")
MANIFEST = typer.Option(None, "--manifest", metavar="FILE", help="A relevance manifest (JSON; docs/relevance.md), "
                        "e.g. data/relevance/xquad_r_relevance.json.")
DATA_ROOT = typer.Option(None, "--data-root", metavar="DIR", help="Where a manifest's relative paths start "
                         "[default: $LAYA_CASES_DATA_ROOT, else $LAYA_CASES_SHARED/data, else ../shared/data].")
LANGS = typer.Option(None, "--langs", metavar="CODES", help="Comma-separated languages [default: all].")
RUNS = typer.Argument(None, metavar="[RUN]...", help="Relevance runs [default: every relevance run].")


def _langs(text: Optional[str]) -> Optional[List[str]]:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


@relevance_app.command("languages")
def languages_command(data: Optional[str] = DATA, manifest: Optional[str] = MANIFEST,
                      data_root: Optional[str] = DATA_ROOT, langs: Optional[str] = LANGS) -> None:
    """List a benchmark's languages: rows, yes/no counts and the yes share.

    \b
    Example:
      laya-cases relevance languages --manifest data/relevance/xquad_r_relevance.json
    """
    from laya_cases.harness.relevance import manifest as M

    bench = M.open_benchmark(data, manifest, data_root)
    rows = M.inventory(bench, _langs(langs))
    columns = ["language", "rows", "yes", "no", "yes_share", "source"]
    console.print_result(columns, [[r[c] for c in columns] for r in rows], "table")


@relevance_app.command("run")
def run_command(
    data: Optional[str] = DATA, manifest: Optional[str] = MANIFEST, data_root: Optional[str] = DATA_ROOT,
    model: str = typer.Option("minilm", "--model", metavar="M", help="minilm (cosine of question and sentence, "
                              "scoring), smollm2 (next-token P(yes), scoring), or a model for --runner."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="NAME", help="hf-generate (generative: "
                                         "verdict parsed), hf-causal-yesno, hf-cross-encoder, hf-nli."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME", help="The model's name in the CSVs "
                                       "[default: --model, plus -<runner> with --runner]."),
    langs: Optional[str] = LANGS,
    template: Optional[Path] = typer.Option(None, "--template", metavar="FILE", help="Prompt template: its first "
                                            "literal {} is replaced by the case text (LM runners only) [default: "
                                            "the benchmark's data/relevance/prompt.txt]."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="PREFIX", help="Runs are PREFIX-<language> "
                                         "[default: rel-<name>]; committed ones are not redone."),
    limit: Optional[int] = typer.Option(None, "--limit", metavar="N", help="First N rows of each language."),
    batch_size: int = typer.Option(16, "--batch-size", metavar="N", help="Items per runner call."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ..."),
    revision: Optional[str] = typer.Option(None, "--revision", metavar="SHA", help="Pin a hub model's revision."),
    runner_option: Optional[List[str]] = typer.Option(None, "--runner-option", metavar="KEY=VALUE",
                                                      help="Extra runner option, e.g. max_new_tokens=4096 for "
                                                           "hf-generate (repeatable; VALUE is JSON when it parses)."),
    commit_every: Optional[int] = typer.Option(None, "--commit-every", metavar="N", help="Commit each run's "
                                               "decisions every N rows; a killed benchmark resumes from them."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Run one model over a benchmark's languages: one committed run per (model, language).

    Languages whose run is committed are not redone; an interrupted one resumes from its committed chunks.

    \b
    Examples:
      laya-cases relevance run --manifest data/relevance/xquad_r_relevance.json --model minilm
      laya-cases relevance run --data ../shared/data/xquad_r_relevance --model smollm2 --limit 40
      laya-cases relevance run --data DIR --model smollm2 --runner hf-generate --template prompt.txt
    """
    from laya_cases.harness.relevance.bench import BenchOptions, run_benchmark
    from laya_cases.run.options import parse_runner_options

    opts = BenchOptions(data=data, manifest=manifest, data_root=data_root, model=model, runner=runner, name=name,
                        langs=_langs(langs), template=str(template) if template else None, run_id=run_id,
                        limit=limit, batch_size=batch_size, device=device, revision=revision,
                        commit_every=commit_every, runner_options=parse_runner_options(runner_option))
    wh = warehouse_of(warehouse)
    pairs = run_benchmark(wh, opts, note=console.note)
    for pair in pairs:
        console.out("%s\t%s\t%d\t%s" % (pair.language, pair.run_id, pair.n_items, pair.status))


@relevance_app.command("export")
def export_command(
    runs: Optional[List[str]] = RUNS,
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Folder for the CSVs."),
    pick_on: Optional[str] = typer.Option(None, "--pick-on", metavar="RUN_OR_SPLIT", help="Also write "
                                          "operating_points.csv: the threshold chosen on this run (or, per model, "
                                          "on its runs in langs:<codes>) applied to the other runs, beside their "
                                          "in-sample best and the optimism."),
    pick_metric: str = typer.Option("f1", "--pick-metric", metavar="M", help="What --pick-on maximises: f1, "
                                    "matthews_corrcoef, balanced_accuracy, precision, recall, accuracy."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Write leaderboard.csv, aggregates.csv, threshold_sweep.csv and scoring_summary.csv.

    \b
    Examples:
      laya-cases relevance export --out results/
      laya-cases relevance export --out results/ --pick-on langs:en
    """
    from laya_cases.harness.relevance.metrics import export

    for path in export(warehouse_of(warehouse), runs or [], str(out), pick_on=pick_on, metric=pick_metric):
        console.out(path)


@relevance_app.command("leaderboard")
def leaderboard_command(
    runs: Optional[List[str]] = RUNS,
    markdown: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE", help="Also write the table as "
                                            "Markdown here."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Rank the models by macro F1, with bootstrap intervals and rank groups of models that are tied.

    Models whose F1 difference is not significant (paired bootstrap over the same items) share a group.

    \b
    Example:
      laya-cases relevance leaderboard --markdown leaderboard.md
    """
    from laya_cases.harness.relevance import board as B

    result = B.leaderboard(warehouse_of(warehouse), runs or None)
    console.print_result(list(B.COLUMNS), [[r[c] for c in B.COLUMNS] for r in result["rows"]], "table")
    console.out("languages: %s; groups share no significant F1 difference (%d paired resamples)"
                % (", ".join(result["languages"]), result["replicates"]))
    write_text(markdown, B.markdown(result), "--markdown")
