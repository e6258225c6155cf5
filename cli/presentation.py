"""`laya-cases presentation`: the label-free slot checks (S7.9-S7.12) of a model, or of a stored run."""
from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import COMMIT_EVERY, RESUME, WAREHOUSE, resumed_id
from laya_cases.query.sql import connect


def _signed(x: Optional[float], digits: int = 4) -> str:
    return "nan" if x is None else "%+.*f" % (digits, x)


def verdict_lines(doc: Dict[str, Any]) -> List[str]:
    """The verdict as people read it: one line per check, its per-state values, the parity line."""
    lines = []
    for name, c in doc["checks"].items():
        lo, hi = c["leave_one_out"]
        lines.append("%-26s %s  (leave-one-out %s..%s)  threshold >= %+.2f  %s"
                     % (name, _signed(c["metric"]), _signed(lo), _signed(hi), c["threshold"],
                        "PASS" if c["passed"] else "FAIL"))
        lines.append("  per state: %s" % " ".join(_signed(v) for v in c["per_state"]))
    p = doc["parity"]
    lines.append("parity  max |dp| %s over %d decisions (tolerance %g, %d unchecked, %d NaN)  %s"
                 % ("nan" if p["max_abs_diff"] is None else "%.3g" % p["max_abs_diff"], p["n_decisions"],
                    p["tolerance"], p["n_unchecked"], p["n_nan"], "agrees" if p["agrees"] else "DISAGREES"))
    return lines


@app.command("presentation", short_help="Label-free checks of a model's first-slot bias.")
def presentation_command(
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="A model whose runner exposes raw "
                                        "logits (a Laya checkpoint directory or hub id)."),
    run: Optional[str] = typer.Option(None, "--run", metavar="RUN", help="Re-derive the verdict of a stored "
                                      "presentation run instead (no model)."),
    states: Optional[Path] = typer.Option(None, "--states", metavar="FILE", help="Other fixed states "
                                          "[default: data/presentation_states.json]."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the verdict (strict JSON)."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runner supports."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    resume: Optional[str] = RESUME,
    commit_every: Optional[int] = COMMIT_EVERY,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Does the model favour the first option slot? Label-free checks over fixed inputs.

    score_slot0_identical: slot-0 logit margin z0 - mean(z) over questions whose levels all read
    the same (passes at >= -0.20); score_first_slot_permuted: share of the 6 orders of three
    urgency levels won by slot 0 (passes at >= 0.15; an order-invariant model gives exactly 1/3).
    The decisions, raw logits included, are committed as a run; the verdict is SQL over it.
    Exit 0: both pass; 1: a check fails; 2: the runner exposes no logits, or its probabilities
    differ from softmax(logits / T) by more than 1e-3. See docs/presentation.md.

    \b
    Examples:
      laya-cases presentation --model convaiinnovations/laya --json presentation.json
      laya-cases presentation --run 20261201T031500-1a2b3c
    """
    from laya_cases.harness.presentation import checks
    from laya_cases.harness.presentation.harness import execute
    from laya_cases.run.inference import RunnerCrash

    wh = warehouse_of(warehouse)
    if run is not None:
        if model is not None or states is not None or run_id is not None or resume is not None:
            raise UsageError("--run re-derives a stored run: drop --model, --states, --run-id and --resume")
        wh.require_run(run)
        rid = run
    else:
        try:
            rid = execute(wh, model=model, run_id=resumed_id(run_id, resume), device=device,
                          states=str(states) if states else None, resume=resume is not None,
                          commit_every=commit_every).run_id
        except RunnerCrash as crash:
            traceback.print_exception(type(crash.exc), crash.exc, crash.exc.__traceback__)
            console.note(str(crash))
            raise typer.Exit(1)
        console.committed(rid, wh.root, 0)
    doc = checks.verdict(connect(wh, [rid]), rid)
    for line in verdict_lines(doc):
        console.out(line)
    for reason in doc["reasons"]:
        console.note(reason)
    write_text(json_out, json.dumps(doc, indent=2, sort_keys=True, allow_nan=False) + "\n", "presentation verdict")
    raise typer.Exit(doc["exit"])
