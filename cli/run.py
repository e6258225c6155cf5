"""Inference commands: `run` (a model over a dataset -> a committed run -> its report); `massive` is in massive.py."""
from __future__ import annotations

import dataclasses
import traceback
from pathlib import Path
from typing import List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases.report.request import ReportRequest
from laya_cases.run.flags import runner_options_from_flags
from laya_cases.run.options import RunOptions
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of
from laya_cases_cli.gates import prepare_gate
from laya_cases_cli.options import WAREHOUSE, _injector, gate_options, report_options, resumed_id
from laya_cases_cli.store import emit_report

# Which rows run and when their decisions commit (injected as `rows`).
_ROW_FLAGS = [
    ("limit", Optional[int], typer.Option(None, "--limit", metavar="N", help="A smoke run: only the first N dataset "
                                          "rows (recorded in the run's options; its labelled-rows digest differs).")),
    ("resume", Optional[str], typer.Option(None, "--resume", metavar="ID", help="Continue the incomplete run ID "
                                           "(killed or stopped midway): committed rows are not run again; the "
                                           "dataset, model and options must be the run's own.")),
    ("commit_every", Optional[int], typer.Option(None, "--commit-every", metavar="N", help="Commit the decisions "
                                                 "every N dataset rows, so that a killed run can be resumed "
                                                 "[default: 65536]; 0: only at the end.")),
    ("commit_seconds", Optional[float], typer.Option(None, "--commit-seconds", metavar="T", help="Also commit "
                                                     "once T seconds have passed since the last commit [default: "
                                                     "300]; 0: never by time.")),
    ("shard", Optional[str], typer.Option(None, "--shard", metavar="I/N", help="Score only shard I of N (contiguous "
                                          "rows) into run --run-id; the run is complete once all N are in. Re-running "
                                          "a shard continues it (docs/scale.md).")),
]


def _with_rows(opts, rows: dict):
    """RunOptions with --limit, --resume (the run id), --commit-every and --commit-seconds."""
    resume = rows["resume"]
    run_id = resumed_id(opts.run_id, resume)
    shard = None
    if rows["shard"] is not None:
        from laya_cases.run.shard import parse_shard

        shard = parse_shard(rows["shard"])
        if not run_id:
            raise UsageError("--shard needs --run-id ID: every shard of a run names the same id")
    return dataclasses.replace(opts, run_id=run_id, resume=resume is not None, limit=rows["limit"],
                               commit_every=rows["commit_every"], commit_seconds=rows["commit_seconds"], shard=shard)


ONNX_HELP = ("Score with this exported ONNX graph (laya-cases export-onnx): a Laya checkpoint export goes through "
             "laya's ONNXAgent, --model naming the checkpoint it came from; a MiniLM export through the "
             "minilm-onnx runner, --model naming the tokenizer [minilm].")

@app.command("run")
@gate_options
@report_options
@_injector("rows", _ROW_FLAGS, dict)
def run_command(
    dataset: Path = typer.Argument(..., metavar="DATASET", help="Labelled dataset (JSON Lines)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="minilm, use-multilingual, smollm2, a "
                                        "Laya checkpoint directory or hub id, or a Hugging Face directory for "
                                        "--runner; an unknown one lists the choices. Overrides every row's "
                                        "`model`. [default: minilm; rows keep their `model`]"),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N",
                                             help="Rows per call when consecutive rows share model and "
                                                  "questions; N <= 1: one row per call."),
    sort_by_length: bool = typer.Option(False, "--sort-by-length", help="Let the runner group similarly "
                                        "long states inside a call (never changes answers or their order)."),
    min_confidence: Optional[float] = typer.Option(None, "--min-confidence", metavar="T",
                                                   help="Abstention gate in [0, 1]: marks answers "
                                                        "passed/abstained/unevaluated; metrics are unchanged."),
    on_error: str = typer.Option("fail", "--on-error", metavar="fail|skip", help="fail: a runner error stops the run (exit 1; "
                                 "chunks already committed stay, for --resume); skip: record the failed rows as "
                                 "errors and go on."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runner supports."),
    revision: Optional[str] = typer.Option(None, "--revision", metavar="SHA",
                                           help="Pin the checkpoint revision (runners that load from a hub)."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="NAME", help="Pick the runner by name and "
                                         "give it --model as its model (e.g. --runner hf-generate --model smollm2)."),
    onnx: Optional[Path] = typer.Option(None, "--onnx", metavar="PATH", help=ONNX_HELP),
    unclamped: bool = typer.Option(False, "--unclamped", help="Laya checkpoints: use the raw bucket temperatures "
                                   "instead of the served, clamped ones."),
    subfolder: Optional[str] = typer.Option(None, "--subfolder", metavar="DIR", help="Laya checkpoints: the checkpoint's "
                                            "subfolder inside the directory or hub repository."),
    runner_option: Optional[List[str]] = typer.Option(None, "--runner-option", metavar="KEY=VALUE",
                                                      help="Extra option for the runner's constructor, e.g. "
                                                           "onnx=model.onnx (repeatable; VALUE is JSON when it "
                                                           "parses). Recorded in extensions.run.runner_options."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="For scripts: print only the run id on stdout (no "
                               "report, no progress, no note); files, gates and exit codes as usual."),
    crash_exit_code: Optional[int] = typer.Option(None, "--crash-exit-code", metavar="N",
                                                  help="Exit N (3..255) with one line when the runner crashes "
                                                       "under --on-error fail, instead of 1 and a traceback."),
    warehouse: Optional[Path] = WAREHOUSE,
    report: ReportRequest = None,
    gate=None,
    rows=None,
) -> None:
    """Score a model on a dataset; commit and report the run.

    Every decision is committed to the warehouse as a new run (its id on stderr, with a progress
    bar while it runs on a terminal), in chunks as it goes: a run killed midway is continued by
    the same command with --resume ID. stdout and the --json/--markdown files are exactly what
    `laya-cases report RUN` gives later from the store.

    \b
    Examples:
      laya-cases run data/support.jsonl --slice language
      laya-cases run data/support.jsonl --model use-multilingual --view table
      laya-cases run data/support.jsonl --onnx onnx/model.int8.onnx --run-id int8
      laya-cases run data/support.jsonl --onnx ckpt-onnx/laya.int8.onnx --model ckpt
      laya-cases run data/support.jsonl --limit 4 -q       # a smoke run; prints the run id
    """
    from laya_cases_cli.progress import RowProgress
    from laya_cases.run.execute import execute
    from laya_cases.run.inference import RunnerCrash

    runner, extra = runner_options_from_flags(runner, runner_option, onnx=onnx, unclamped=unclamped,
                                              subfolder=subfolder)
    opts = _with_rows(RunOptions(dataset=str(dataset), model=model, batch_size=batch_size, runner=runner,
                                 sort_by_length=sort_by_length, min_confidence=min_confidence, on_error=on_error,
                                 device=device, revision=revision, run_id=run_id, crash_exit_code=crash_exit_code,
                                 runner_options=extra), rows)
    options = report.options()
    wh = warehouse_of(warehouse)
    checked = prepare_gate(gate, wh, options)         # S6.8: the policy is checked before any model loads
    before = set(wh.incomplete_ids())
    try:
        with RowProgress("run", waiting="loading the model", enabled=not quiet) as bar:
            recorded = execute(wh, opts, progress=bar.update, on_loaded=bar.set_total)
    except RunnerCrash as crash:
        _crashed(crash, wh, crash_exit_code)
    except KeyboardInterrupt:
        _interrupted(wh, opts.run_id, before)
    if _announce(recorded, wh, quiet, gated=checked is not None):
        emit_report(wh, recorded.run_id, report, options, gate=checked, quiet=quiet)


def _announce(recorded, wh, quiet: bool, gated: bool = False) -> bool:
    """Where the run went; True when its report follows. stdout: with --quiet the run id alone, else
    the report as `report RUN` prints it. A shard that is not the last says where the run stands
    (stderr) and has no report and no gate: the last shard reports and judges."""
    if quiet:
        console.out(recorded.run_id)
    if getattr(recorded, "missing", None):
        console.note("committed shard %d/%d of run %s to %s; %s; the last shard prints the report and judges "
                     "the gates" % (recorded.shard, recorded.count, recorded.run_id, wh.root,
                                    wh.incomplete_note(recorded.run_id) or "waiting for the other shards"))
        if gated:                # said, not dropped: this shard cannot know the other shards' flags
            console.note("the gate flags given to this shard were not judged: it did not finish last; give them "
                         "to the last shard, or judge the complete run with `laya-cases report %s` and the flags"
                         % recorded.run_id)
        return False
    if not quiet:
        console.committed(recorded.run_id, wh.root, recorded.n_errors)
    return True


def _interrupted(wh, run_id: Optional[str], before) -> None:
    """Ctrl-C: one line saying what stays and how to continue, exit 130 (128 + SIGINT, as shells do)."""
    started = sorted(set(wh.incomplete_ids()) - before)
    rid = run_id if run_id and wh.run_state(run_id) == "incomplete" else (started[0] if started else None)
    if rid is None:
        console.note("interrupted before the first chunk was committed: nothing was written")
    else:
        console.note("interrupted: %s" % wh.incomplete_note(rid))
    raise typer.Exit(130)


def _crashed(crash, wh, crash_exit_code: Optional[int]):
    """A runner crash under --on-error fail: like the reference, the traceback and exit 1 (S6.7); with
    --crash-exit-code N one line and exit N (S9.7). Committed chunks stay, for --resume."""
    if crash_exit_code is None:
        traceback.print_exception(type(crash.exc), crash.exc, crash.exc.__traceback__)
    console.note("; ".join(filter(None, (str(crash), wh.incomplete_note(crash.run_id)))))
    raise typer.Exit(1 if crash_exit_code is None else crash_exit_code)
