"""Gate flags, declared once and shared by `report`, `ingest` and `run` (@gate_options), and the
`compare` and `diff` commands. Library: laya_cases/gates.py and laya_cases/diff.py.

Exit codes (S6.7): 0 every gate passed (or none was asked for), 1 a gate failed (one `FAIL:` line
per failure on stderr), 2 a usage error (one `laya-cases:` line, nothing written).
"""
from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases import UsageError
from laya_cases import gates as G
from laya_cases_cli.app import WAREHOUSE, app, fail, warehouse_of, write_text

#: (parameter name, annotation, typer option): the gate flags of every gated command.
_GATE_PARAMS = [
    ("min_accuracy", Optional[str], typer.Option(
        None, "--min-accuracy", metavar="V", help="Fail (exit 1) when choice_accuracy (else noul_accuracy) "
        "is below V (S6.2).")),
    ("max_ece", Optional[str], typer.Option(None, "--max-ece", metavar="V", help="Fail when ece is above V.")),
    ("min_pairs", Optional[List[str]], typer.Option(
        None, "--min", metavar="METRIC=V", help="Fail when METRIC is below V, or absent, or NaN (repeatable).")),
    ("max_pairs", Optional[List[str]], typer.Option(
        None, "--max", metavar="METRIC=V", help="Fail when METRIC is above V, or absent, or NaN (repeatable).")),
    ("baseline", Optional[str], typer.Option(
        None, "--baseline", metavar="BASE", help="Compare overall metrics with BASE, a report JSON (ours or the "
        "reference laya-evals') or a run id; exact unless --tolerance (S6.4); identities must match (S5.7).")),
    ("tolerance_pairs", Optional[List[str]], typer.Option(
        None, "--tolerance", metavar="METRIC=V", help="Allowed absolute drift from --baseline (repeatable).")),
    ("gate_policy", Optional[Path], typer.Option(
        None, "--gate-policy", metavar="FILE", help="Per-slice rules from a JSON policy (S6.5), validated "
        "before anything runs.")),
]


def gate_options(fn):
    """Add the gate flags to a typer command; the command receives them as `gate: GateRequest`."""
    original = inspect.signature(fn, eval_str=True)
    kept = [p for p in original.parameters.values() if p.name != "gate"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
             for name, kind, option in _GATE_PARAMS]
    positional = [p for p in kept if p.kind != inspect.Parameter.KEYWORD_ONLY]
    keyword = [p for p in kept if p.kind == inspect.Parameter.KEYWORD_ONLY]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        values = {name: kwargs.pop(name, None) for name, _, _ in _GATE_PARAMS}
        request = G.GateRequest(
            mins=values["min_pairs"] or (), maxs=values["max_pairs"] or (), min_accuracy=values["min_accuracy"],
            max_ece=values["max_ece"], baseline=values["baseline"], tolerances=values["tolerance_pairs"] or (),
            policy_path=None if values["gate_policy"] is None else str(values["gate_policy"]))
        return fn(*args, gate=request, **kwargs)

    params = positional + keyword + added
    wrapper.__signature__ = original.replace(parameters=params)
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    wrapper.__annotations__["return"] = original.return_annotation
    return wrapper


def prepare_gate(request: Optional[G.GateRequest], wh=None, options=None, *,
                 early_baseline: bool = False) -> Optional[G.Gate]:
    """S6.8, first steps (policy, relative rule without --baseline, pairs); None without gate flags.
    Raises UsageError: call it inside the command's usage-error handling."""
    if request is None:
        return None
    return G.prepare(request, wh, options, early_baseline=early_baseline)


def judge(gate: G.Gate, doc: Dict[str, Any], wh=None, options=None) -> List[str]:
    """S6.8 after evaluation: thresholds, baseline (deltas printed now), comparability, policy."""
    try:
        result = gate.judge(doc, wh, options)
    except UsageError as exc:
        fail(str(exc))
    for line in G.delta_lines(result.deltas):
        typer.echo(line)
    return result.failures


def finish(failures: List[str]) -> None:
    """The last step of a gated command: one FAIL line per failure, exit 1 if any."""
    for failure in failures:
        typer.echo("FAIL: " + failure, err=True)
    if failures:
        raise typer.Exit(1)


@app.command()
def compare(
    report: str = typer.Argument(..., metavar="RUN", help="The candidate: a report JSON file or a run id."),
    baseline: str = typer.Option(..., "--baseline", metavar="BASE", help="A report JSON (ours or the reference "
                                 "laya-evals') or a run id; identities must match (S5.7)."),
    tolerance: Optional[List[str]] = typer.Option(None, "--tolerance", metavar="METRIC=V",
                                                  help="Allowed absolute drift (repeatable); exact otherwise."),
    gate_policy: Optional[Path] = typer.Option(None, "--gate-policy", metavar="FILE",
                                               help="Also apply per-slice rules from a JSON policy (S6.5)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Check a run or saved report against a baseline (S6.9).

    Writes nothing; prints a delta line for every shared overall metric. Exit 0 when every delta is within
    tolerance (exact by default) and every policy rule passes, 1 otherwise, 2 on a usage error.

    \b
    Example:
      laya-cases compare new-run --baseline eval/baseline.json --tolerance ece=0.02
    """
    try:
        policy = G.load_policy(str(gate_policy)) if gate_policy else None
        tolerances = G.parse_pairs(tolerance)
        wh = warehouse_of(warehouse)
        document = G.resolve_report(report, wh)
        if policy is not None and G.identity_of(document).get("gate_policy") not in (None, policy):
            typer.echo("laya-cases: warning: --gate-policy differs from the report's recorded gate_policy; "
                       "this verdict uses --gate-policy", err=True)
        result = G.compare_documents(document, G.resolve_report(baseline, wh), tolerances, policy)
    except UsageError as exc:
        fail(str(exc))
    for line in G.delta_lines(result.deltas):
        typer.echo(line)
    for failure in result.failures:               # a compare failure alone prints no FAIL line (S6.9)
        typer.echo("FAIL: " + failure, err=True)
    if not result.compare_ok or result.failures:
        raise typer.Exit(1)


@app.command()
def diff(
    run_a: str = typer.Argument(..., metavar="RUN_A", help="The reference run (before)."),
    run_b: str = typer.Argument(..., metavar="RUN_B", help="The run compared with it (after)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="Also per group of DIM: language, model, qid or tag."),
    show: int = typer.Option(10, "--show", metavar="N", help="Flipped cases to print per direction (JSON lists all)."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the diff as JSON here "
                                            "(every flip)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE",
                                                help="Write the diff as Markdown here."),
    bootstrap: int = typer.Option(2000, "--bootstrap", metavar="B", help="Bootstrap replicates, 100..100000."),
    seed: int = typer.Option(0, "--seed", metavar="S", help="Bootstrap seed (random.Random(seed), S9.5)."),
    max_flip_rate: Optional[str] = typer.Option(None, "--max-flip-rate", metavar="R",
                                                help="Fail (exit 1) when more than R of the paired cases flipped."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Compare two runs case by case: what flipped, and is it noise?

    Joins the runs on case id and prints cases only in one run, right->wrong and wrong->right
    flips, the accuracy delta (overall and per --by group) with a paired bootstrap 95% interval
    and an exact McNemar p-value, the confidence shift and changed gold labels.

    \b
    Example:
      laya-cases diff base int8 --by language --show 5
    """
    from laya_cases.diff import diff as do_diff, markdown, text_lines

    try:
        if show < 0:
            raise UsageError("--show must be >= 0, got %d" % show)
        bound = G.parse_limit("--max-flip-rate", max_flip_rate)
        result = do_diff(warehouse_of(warehouse), run_a, run_b, by=by, bootstrap=bootstrap, seed=seed,
                         max_flip_rate=bound)
    except UsageError as exc:
        fail(str(exc))
    for line in text_lines(result, show):
        typer.echo(line)
    if json_out is not None:
        write_text(json_out, json.dumps(result, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "diff")
    write_text(markdown_out, markdown(result, show), "diff markdown")
    finish(result["gate"]["failures"])
