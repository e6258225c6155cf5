"""Robustness commands: `robustness` (variants of every case, one run) and `robustness-report` (from the store).
Library: laya_cases/robustness/. Exit 0 ok, 1 a language failed or a policy rule failed, 2 a usage error."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE

_JSON = typer.Option(None, "--json", metavar="FILE", help="Write the robustness document here (strict JSON).")
_MARKDOWN = typer.Option(None, "--markdown", metavar="FILE", help="Write the tables as Markdown here.")
_POLICY = typer.Option(None, "--gate-policy", metavar="FILE", help="Fail (exit 1) unless every rule holds, e.g. "
                       "option_order.semantic_agreement_rate >= 0.9 per language (docs/robustness.md).")


def _emit(wh, run_id: str, policy, json_out: Optional[Path], markdown_out: Optional[Path]) -> None:
    from laya_cases.robustness.render import markdown, text_lines
    from laya_cases.robustness.report import build
    from laya_cases.robustness.summary import strict_json

    doc, failures = build(wh, run_id, policy)
    for line in text_lines(doc):
        console.out(line)
    write_text(json_out, strict_json(doc), "robustness JSON")
    write_text(markdown_out, markdown(doc), "robustness markdown")
    console.failures(failures)
    if failures:
        raise typer.Exit(1)


@app.command("robustness")
def robustness_command(
    dataset: Path = typer.Argument(..., metavar="DATASET", help="Labelled dataset: one choice question per row "
                                   "(e.g. from `laya-cases massive`)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="As for `run` [default: minilm]."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="NAME", help="Pick the runner by name."),
    seed: int = typer.Option(13, "--seed", metavar="S", help="Variant seed: a fresh random.Random(S) per language "
                             "(S7.13)."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="Rows per call when "
                                             "consecutive presented questions are the same."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runner supports."),
    revision: Optional[str] = typer.Option(None, "--revision", metavar="SHA", help="Pin the checkpoint revision."),
    runner_option: Optional[List[str]] = typer.Option(None, "--runner-option", metavar="KEY=VALUE",
                                                      help="Extra runner constructor option (repeatable)."),
    json_out: Optional[Path] = _JSON,
    markdown_out: Optional[Path] = _MARKDOWN,
    gate_policy: Optional[Path] = _POLICY,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Ask every case three ways (baseline, option order, label rename); commit one run; print agreement.

    Each presentation is a decision row of one run, in canonical option order, linked to its
    baseline case; the summary (S7.15, S7.16: agreement, probability drift, JS divergence,
    confidence drift, accuracy and ECE per kind, per language) is SQL over those rows, and
    `laya-cases robustness-report RUN` prints it again from the store. `report RUN` reports the
    baseline rows.

    \b
    Examples:
      laya-cases massive en-US --rows 200 --out massive-en.jsonl
      laya-cases robustness massive-en.jsonl --model minilm --run-id rob-en --json rob-en.json
    """
    from laya_cases_cli.progress import RowProgress
    from laya_cases.robustness import gate as G
    from laya_cases.robustness.execute import RobustnessOptions, execute
    from laya_cases.run import parse_runner_options

    policy = G.load(str(gate_policy)) if gate_policy else None      # checked before any model loads
    opts = RobustnessOptions(dataset=str(dataset), model=model, runner=runner, seed=seed, run_id=run_id,
                             batch_size=batch_size, device=device, revision=revision,
                             runner_options=parse_runner_options(runner_option))
    wh = warehouse_of(warehouse)
    with RowProgress("robustness", waiting="loading the model") as bar:
        recorded = execute(wh, opts, progress=bar.update, on_loaded=bar.set_total)
    console.committed(recorded.run_id, wh.root, recorded.n_errors)
    _emit(wh, recorded.run_id, policy, json_out, markdown_out)


@app.command("robustness-report")
def robustness_report_command(
    run: str = typer.Argument(..., metavar="RUN", help="A run made by `laya-cases robustness`."),
    json_out: Optional[Path] = _JSON,
    markdown_out: Optional[Path] = _MARKDOWN,
    gate_policy: Optional[Path] = _POLICY,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Print a robustness run's agreement, drift and quality per kind again, from the store (no model).

    \b
    Example:
      laya-cases robustness-report rob-en --gate-policy robustness-policy.json
    """
    from laya_cases.robustness import gate as G

    policy = G.load(str(gate_policy)) if gate_policy else None
    _emit(warehouse_of(warehouse), run, policy, json_out, markdown_out)
