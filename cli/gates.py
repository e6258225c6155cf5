"""The gate steps of gated commands (prepare, judge, finish) and the `compare` and `diff` commands.
The gate flags are declared in options.py. Library: laya_cases/gates/runner.py and laya_cases/report/diff.py.

Exit codes (S6.7): 0 every gate passed (or none was asked for), 1 a gate failed (one `FAIL:` line
per failure on stderr), 2 a usage error (one `laya-cases:` line, nothing written).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases.gates import runner as G
from laya_cases.query.engines import check_engine
from laya_cases_cli import console
from laya_cases_cli.app import app, is_stdout, warehouse_of, write_text
from laya_cases_cli.options import _REPORT_PARAMS, JUNIT, SUMMARY, WAREHOUSE

_ENGINE = {name: option for name, _, option in _REPORT_PARAMS if name in ("engine", "spark_master")}

def prepare_gate(request: Optional[G.GateRequest], wh=None, options=None, *,
                 early_baseline: bool = False, session=None) -> Optional[G.Gate]:
    """S6.8, first steps (policy, relative rule without --baseline, pairs); None without gate flags.
    A baseline run is read through `session` (report.session.ReportSession) when it holds it. Raises
    UsageError."""
    if request is None:
        return None
    return G.prepare(request, wh, options, early_baseline=early_baseline, session=session)


class Verdict(list):
    """The FAIL lines of a judged gate, with the lines that explain "baseline comparison failed"."""

    details: List[str] = []


def judge(gate: G.Gate, doc: Dict[str, Any], wh=None, options=None, session=None) -> Verdict:
    """S6.8 after evaluation: thresholds, baseline (deltas printed now), comparability, policy; the
    --junit / --summary files written. Raises UsageError (e.g. an unreadable baseline)."""
    result = gate.judge(doc, wh, options, session)
    for line in G.delta_lines(result.deltas):
        console.out(line)
    run = doc.get("extensions", {}).get("run", {}).get("run_id", "?")
    return verdict(result, gate.junit, gate.summary, "laya-cases gate: run %s" % run)


def verdict(result: G.GateResult, junit: Optional[str], summary: Optional[str], title: str) -> Verdict:
    """The FAIL lines of `result` with their detail lines; the CI files written (JUnit XML replaced, the
    Markdown summary appended, as GitHub's step summary expects)."""
    from laya_cases.gates import ci as gate_ci

    out = Verdict(result.failures)
    out.details = gate_ci.detail_lines(result.deltas)
    for line in G.note_lines(result.measures):     # "insufficient evidence" on a rule that lets it pass
        console.err("NOTE: " + line)
    if junit or summary:
        checks = gate_ci.checks(result.thresholds, result.deltas, result.measures, result.failures)
        _write(junit, gate_ci.junit(checks, title), "w", "--junit")
        _write(summary, gate_ci.summary(checks, title), "a", "--summary")
    return out


def _write(path: Optional[str], text: str, mode: str, flag: str) -> None:
    if path is None:
        return
    if is_stdout(path):
        console.file_to_stdout(text)
        return
    try:
        with open(path, mode, encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError("%s %s: cannot write: %s" % (flag, path, exc.strerror or exc)) from None


def finish(failures: List[str]) -> None:
    """The last step of a gated command: one FAIL line per failure (the failing baseline metrics under
    "baseline comparison failed"), exit 1 if any."""
    details = getattr(failures, "details", [])
    for line in failures:
        console.failures([line])
        if line == "baseline comparison failed":
            for detail in details:
                console.err(detail)
    if failures:
        raise typer.Exit(1)


@app.command()
def compare(
    report: str = typer.Argument(..., metavar="RUN", help="The candidate: a report JSON file or a run id."),
    baseline: str = typer.Option(..., "--baseline", metavar="BASE", help="A report JSON (ours or the reference "
                                 "laya-evals') or a run id; identities must match (docs/identity.md)."),
    tolerance: Optional[List[str]] = typer.Option(None, "--tolerance", metavar="METRIC=V",
                                                  help="Allowed absolute drift (repeatable); exact otherwise."),
    gate_policy: Optional[Path] = typer.Option(None, "--gate-policy", metavar="FILE",
                                               help="Also apply per-slice rules from a JSON policy."),
    junit: Optional[Path] = JUNIT,
    summary: Optional[Path] = SUMMARY,
    engine: str = _ENGINE["engine"],
    spark_master: Optional[str] = _ENGINE["spark_master"],
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Check a run or saved report against a baseline.

    Writes nothing; prints a delta line for every shared overall metric. Exit 0 when every delta is within
    tolerance (exact by default) and every policy rule passes, 1 otherwise, 2 on a usage error.

    \b
    Example:
      laya-cases compare new-run --baseline eval/baseline.json --tolerance ece=0.02
    """
    from laya_cases.report.build import Options

    options = Options(engine=check_engine(engine), spark_master=spark_master)   # runs the SQL (docs/scale.md)
    policy = G.load_policy(str(gate_policy)) if gate_policy else None
    tolerances = G.parse_pairs(tolerance, "--tolerance")
    wh = warehouse_of(warehouse)
    document = G.resolve_report(report, wh, options)
    if policy is not None and G.identity_of(document).get("gate_policy") not in (None, policy):
        console.note("warning: --gate-policy differs from the report's recorded gate_policy; "
                     "this verdict uses --gate-policy")
    result = G.compare_documents(document, G.resolve_report(baseline, wh, options), tolerances, policy, options)
    for line in G.delta_lines(result.deltas):
        console.out(line)
    out = verdict(result, None if junit is None else str(junit), None if summary is None else str(summary),
                  "laya-cases compare: %s against %s" % (report, baseline))
    console.failures(out)          # a compare failure alone prints no FAIL line (S6.9): stderr is the reference's
    if not result.compare_ok or result.failures:
        raise typer.Exit(1)


@app.command(short_help="Compare two runs case by case: flips, deltas, McNemar.")
def diff(
    run_a: str = typer.Argument(..., metavar="RUN_A", help="The reference run (before)."),
    run_b: str = typer.Argument(..., metavar="RUN_B", help="The run compared with it (after)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="Also per group of DIM: language, model, qid or tag."),
    show: int = typer.Option(10, "--show", metavar="N", help="Flipped cases to print per direction (JSON lists all)."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the diff as JSON here "
                                            "(every flip)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE",
                                                help="Write the diff as Markdown here."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Write the diff as one "
                                            "self-contained HTML file here, both runs' charts overlaid (docs/html.md)."),
    bootstrap: int = typer.Option(2000, "--bootstrap", metavar="B", help="Bootstrap replicates, 100..100000."),
    seed: int = typer.Option(0, "--seed", metavar="S", help="Bootstrap seed (CPython random.Random(seed))."),
    max_flip_rate: Optional[str] = typer.Option(None, "--max-flip-rate", metavar="R",
                                                help="Fail (exit 1) when more than R of the paired cases flipped."),
    margin: Optional[str] = typer.Option(None, "--margin", metavar="T",
                                         help="The accuracy change that matters: a delta whose 95% interval reaches "
                                         "both -T and +T is \"insufficient evidence\" (never a failure)."),
    reruns: Optional[List[str]] = typer.Option(None, "--reruns", metavar="RUN", help="Reruns of A's dataset "
                                               "(another seed, batch size, a quantized copy; repeat or separate by "
                                               "commas): read the delta against their case-by-case noise."),
    engine: str = _ENGINE["engine"],
    spark_master: Optional[str] = _ENGINE["spark_master"],
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Compare two runs case by case: what flipped, and is it noise?

    Joins the runs on case id and prints cases only in one run, right->wrong and wrong->right
    flips, the accuracy delta (overall and per --by group) with a paired bootstrap 95% interval
    and an exact McNemar p-value (per group also Holm- and Benjamini-Hochberg-adjusted over the
    groups tested), the confidence shift and changed gold labels.

    \b
    Examples:
      laya-cases diff base int8 --by language --show 5
      laya-cases diff base int8 --reruns base,seed1,seed2
    """
    from laya_cases.harness.diff_blocks import DIFF_BLOCKS
    from laya_cases.report.diff import diff as do_diff, markdown, text_lines
    from laya_cases_cli.progress import StepProgress

    if show < 0:
        raise UsageError("--show must be >= 0, got %d" % show)
    bound = G.parse_limit("--max-flip-rate", max_flip_rate)
    width = G.parse_limit("--margin", margin)
    with StepProgress() as bars:              # a bar on a terminal's stderr, gone before anything is printed
        result = do_diff(warehouse_of(warehouse), run_a, run_b, by=by, bootstrap=bootstrap, seed=seed,
                         max_flip_rate=bound, margin=width, engine=check_engine(engine), master=spark_master, blocks=DIFF_BLOCKS,
                         phase=bars.phases("diff"), reruns=[r for item in reruns or () for r in item.split(",") if r])
    for line in text_lines(result, show, DIFF_BLOCKS):
        console.out(line)
    if json_out is not None:
        write_text(json_out, json.dumps(result, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "diff")
    write_text(markdown_out, markdown(result, show, DIFF_BLOCKS), "diff markdown")
    if html_out is not None:
        from laya_cases.views.html.files import diff_html, run_docs
        write_text(html_out, diff_html(result, run_docs(warehouse_of(warehouse), [run_a, run_b])), "diff HTML")
    finish(result["gate"]["failures"])
