"""Flags declared once and shared: the report flags (`report`, `run`), injected as
`report: ReportRequest`, and the gate flags (`report`, `ingest`, `run`), injected as
`gate: GateRequest`. A command lists neither; its --help shows both."""
from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Optional

import typer

if TYPE_CHECKING:                        # imported where used: `laya-cases runs` needs no report code
    from laya_cases.report.request import ReportRequest

WAREHOUSE_PARAM = "warehouse"


def checked_warehouse(text: str) -> str:
    """`-w ""` is a mistake, not the current directory; a URL must be one the store supports, in full."""
    from laya_cases.store.delta.url import warehouse_problem

    if not text:
        raise typer.BadParameter("the warehouse path is empty")
    problem = warehouse_problem(text)
    if problem:
        raise typer.BadParameter(problem)
    return text


def _warehouse_path(text: str) -> Path:
    return Path(checked_warehouse(text))


WAREHOUSE = typer.Option(None, "--warehouse", "-w", metavar="DIR", envvar="LAYA_CASES_WAREHOUSE",
                         parser=_warehouse_path, help="Warehouse directory [default: ./warehouse].")

#: (parameter name, annotation, typer option): the report flags.
RESUME = typer.Option(None, "--resume", metavar="ID", help="Continue the incomplete run ID (killed or stopped "
                      "midway): committed work is not redone; the inputs, model and options must be the run's own.")
COMMIT_EVERY = typer.Option(None, "--commit-every", metavar="N", help="Commit the decisions every N answers asked, "
                            "so that a killed run can be resumed [default: 65536]; 0: only at the end.")


def resumed_id(run_id: Optional[str], resume: Optional[str]) -> Optional[str]:
    """The run id of a command with --run-id and --resume (the run it continues)."""
    if resume is not None and run_id is not None and run_id != resume:
        from laya_cases.core.errors import UsageError

        raise UsageError("--run-id and --resume name different runs; --resume ID alone continues run ID")
    return resume or run_id


_REPORT_PARAMS = [
    ("json_out", Optional[Path], typer.Option(None, "--json", metavar="FILE", help="Write the full report JSON "
                                              "here (reference keys plus `extensions`); `-`: to stdout, "
                                              "instead of the text report.")),
    ("no_cases", bool, typer.Option(False, "--no-cases", help="Leave the JSON's `cases` list empty (metrics "
                                    "only: small and fast).")),
    ("json_strict", bool, typer.Option(False, "--json-strict", help="Write null for NaN and Infinity in the JSON "
                                       "(RFC 8259: JSON.parse and strict parsers read it); the default keeps the "
                                       "reference's NaN tokens, byte for byte.")),
    ("markdown_out", Optional[Path], typer.Option(None, "--markdown", metavar="FILE", help="Write the metrics as "
                                                  "Markdown tables here.")),
    ("html_out", Optional[Path], typer.Option(None, "--html", metavar="FILE", help="Write a self-contained HTML "
                                              "report here (tables, intervals, reliability and risk-coverage charts, a "
                                              "confidence histogram per slice; docs/html.md).")),
    ("slice_", Optional[List[str]], typer.Option(None, "--slice", metavar="DIM", help="Also print the metrics per "
                                                 "group of DIM: language, model, qid or tag (repeatable).")),
    ("score_within", Optional[List[float]], typer.Option(
        None, "--score-within", metavar="X", help="Add score_within_X: share of score answers within X of the "
        "label (repeatable).")),
    ("coverage", Optional[List[float]], typer.Option(
        None, "--coverage", metavar="C", help="Add selective accuracy at coverage C in (0, 1] to extensions "
        "(repeatable).")),
    ("threshold", Optional[List[float]], typer.Option(
        None, "--threshold", metavar="T", help="Add a cut accepting gate confidence >= T to extensions "
        "(repeatable).")),
    ("bootstrap", int, typer.Option(0, "--bootstrap", metavar="B", show_default=False, help="Add 95% percentile "
                                    "intervals to every published ratio from B row resamples (100-100000) "
                                    "[default: off].")),
    ("seed", int, typer.Option(0, "--seed", metavar="S", help="Seed of the bootstrap's CPython random.Random "
                               "stream.")),
    ("engine", str, typer.Option("duckdb", "--engine", metavar="duckdb|spark", help="Run the metric SQL on "
                                 "DuckDB (embedded) or Apache Spark (pip install -e '.[spark]' from the clone; "
                                 "docs/scale.md).")),
    ("spark_master", Optional[str], typer.Option(None, "--spark-master", metavar="URL", help="--engine spark: "
                                                 "the master [default: $SPARK_REMOTE, else local[*]].")),
    ("view", str, typer.Option("text", "--view", metavar="text|table", help="text: the reference's lines; "
                               "table: readable tables with counts, fitted to the terminal.")),
    ("relabels", bool, typer.Option(False, "--relabels", help="Read the store's accepted relabels (laya-cases "
                                    "relabel) as the gold labels; the run's files are unchanged (docs/stability.md).")),
]

JUNIT = typer.Option(None, "--junit", metavar="FILE", help="Also write the gate's verdict as JUnit XML, one "
                     "test case per rule (CI test reports).")
SUMMARY = typer.Option(None, "--summary", metavar="FILE", help="Also append the verdict as a Markdown table, "
                       "e.g. --summary \"$GITHUB_STEP_SUMMARY\".")

#: (parameter name, annotation, typer option): the gate flags.
_GATE_PARAMS = [
    ("min_accuracy", Optional[str], typer.Option(
        None, "--min-accuracy", metavar="V", help="Fail (exit 1) when choice_accuracy (else noul_accuracy) "
        "is below V.")),
    ("max_ece", Optional[str], typer.Option(None, "--max-ece", metavar="V", help="Fail when ece is above V.")),
    ("min_pairs", Optional[List[str]], typer.Option(
        None, "--min", metavar="METRIC=V", help="Fail when METRIC is below V, or absent, or NaN (repeatable).")),
    ("max_pairs", Optional[List[str]], typer.Option(
        None, "--max", metavar="METRIC=V", help="Fail when METRIC is above V, or absent, or NaN (repeatable).")),
    ("baseline", Optional[str], typer.Option(
        None, "--baseline", metavar="BASE", help="Compare overall metrics with BASE, a report JSON (ours or the "
        "reference laya-evals') or a run id; exact unless --tolerance; identities must match (docs/identity.md).")),
    ("tolerance_pairs", Optional[List[str]], typer.Option(
        None, "--tolerance", metavar="METRIC=V", help="Allowed absolute drift from --baseline (repeatable).")),
    ("gate_policy", Optional[Path], typer.Option(
        None, "--gate-policy", metavar="FILE", help="Per-slice rules from a JSON policy (docs/metrics.md#gates), validated "
        "before anything runs.")),
    ("junit", Optional[Path], JUNIT),
    ("summary", Optional[Path], SUMMARY),
]


def _report_request(v) -> ReportRequest:
    from laya_cases.report.request import ReportRequest

    return ReportRequest(slices=tuple(v["slice_"] or ()), json_out=v["json_out"], markdown_out=v["markdown_out"],
                         score_within=tuple(v["score_within"] or ()), coverages=tuple(v["coverage"] or ()),
                         thresholds=tuple(v["threshold"] or ()), bootstrap=v["bootstrap"], seed=v["seed"],
                         view=v["view"], no_cases=bool(v["no_cases"]), json_strict=bool(v["json_strict"]),
                         html_out=v["html_out"],
                         engine=v["engine"] or "duckdb", spark_master=v["spark_master"],
                         relabels=bool(v["relabels"]))


def _gate_request(v):
    """A laya_cases.gates.runner.GateRequest (imported here: the gates import pyarrow, which `runs` does not need)."""
    from laya_cases.gates import runner as G

    return G.GateRequest(mins=v["min_pairs"] or (), maxs=v["max_pairs"] or (), min_accuracy=v["min_accuracy"],
                         max_ece=v["max_ece"], baseline=v["baseline"], tolerances=v["tolerance_pairs"] or (),
                         policy_path=None if v["gate_policy"] is None else str(v["gate_policy"]),
                         junit=None if v["junit"] is None else str(v["junit"]),
                         summary=None if v["summary"] is None else str(v["summary"]))


def _injector(target: str, declared, build: Callable[[dict], Any]):
    """A decorator that adds the `declared` flags to a typer command (before -w, which stays last in
    --help) and calls it with `target=build(values)` instead."""
    def decorate(fn):
        original = _signature(fn, target)
        kept = [p for p in original.parameters.values() if p.name != target]
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
                 for name, kind, option in declared]
        last = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in kept if p.name == WAREHOUSE_PARAM]
        kept = [p for p in kept if p.name != WAREHOUSE_PARAM]
        positional = [p for p in kept if p.kind != inspect.Parameter.KEYWORD_ONLY]
        keyword = [p for p in kept if p.kind == inspect.Parameter.KEYWORD_ONLY]
        params = positional + keyword + added + last

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            values = {name: kwargs.pop(name, None) for name, _, _ in declared}
            return fn(*args, **{target: build(values)}, **kwargs)

        wrapper.__signature__ = original.replace(parameters=params)
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        wrapper.__annotations__["return"] = original.return_annotation
        return wrapper
    return decorate


def _signature(fn, injected: str) -> inspect.Signature:
    """fn's signature with its annotations evaluated (typer reads them), except the `injected` parameter's:
    its type need not be imported when the command is registered."""
    def value(annotation):
        return eval(annotation, fn.__globals__) if isinstance(annotation, str) else annotation   # noqa: S307
    signature = inspect.signature(fn)
    params = [p if p.name == injected else p.replace(annotation=value(p.annotation))
              for p in signature.parameters.values()]
    return signature.replace(parameters=params, return_annotation=value(signature.return_annotation))


#: Add the report flags to a command; it receives them as `report: ReportRequest`.
report_options = _injector("report", _REPORT_PARAMS, _report_request)
#: Add the gate flags to a command; it receives them as `gate: GateRequest`.
gate_options = _injector("gate", _GATE_PARAMS, _gate_request)
