"""Store commands: validate, ingest, runs, report, sql, gc."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from laya_cases import UsageError
from laya_cases import dataset as D
from laya_cases import report as R
from laya_cases_cli.app import WAREHOUSE, app, fail, print_result, warehouse_of, write_text
from laya_cases_cli.gates import finish, gate_options, judge, prepare_gate


@app.command()
def validate(dataset: Path = typer.Argument(..., help="Labelled dataset (JSON Lines, spec S1)."),
             strict: bool = typer.Option(False, "--strict", help="Also check label types, membership and ranges "
                                         "and question bodies (S9.6); report every finding.")) -> None:
    """Check a labelled dataset; prints `<rows> examples, <q> question id(s): <ids>` (S1.6)."""
    try:
        rows = D.load(str(dataset))
    except UsageError as exc:
        fail(str(exc))
    if strict:
        from laya_cases.strict import row_findings

        findings = [f for row in rows for f in row_findings(str(dataset), row)]
        for finding in findings:
            typer.echo(("" if finding.error else "warning: ") + str(finding), err=True)
        errors = sum(1 for f in findings if f.error)
        if errors:
            typer.echo("laya-cases: %s: %d error(s) under --strict" % (dataset, errors), err=True)
            raise typer.Exit(2)
    typer.echo(D.summary_line(rows))


@app.command()
@gate_options
def ingest(
    answers: Path = typer.Argument(..., help="Labelled rows plus `answers` {qid: answer} and optional `latency_ms`."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="Run id [default: <UTC time>-<random>]."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="The labelled dataset the answers were produced "
                                           "from: its bytes become dataset_sha256 and every row must match."),
    warehouse: Optional[Path] = WAREHOUSE,
    gate=None,
) -> None:
    """Commit recorded answers as a run, exactly as an inference run would; prints the run id.

    With a gate flag it then prints the run's report and gates it like `report` (the baseline is
    read before anything is committed, so a bad one leaves the store untouched)."""
    from laya_cases.ingest import ingest as do_ingest
    from laya_cases.progress import RowProgress

    wh = warehouse_of(warehouse)
    try:
        checked = prepare_gate(gate, wh, R.Options(), early_baseline=True)
        with RowProgress("ingest") as bar:
            rid = do_ingest(wh, str(answers), run_id=run_id, dataset_path=str(dataset) if dataset else None,
                            progress=bar.update)
    except UsageError as exc:
        fail(str(exc))
    typer.echo(rid)
    if checked is not None:
        emit_report(wh, rid, R.Options(), [], None, None, gate=checked)


@app.command()
def runs(warehouse: Optional[Path] = WAREHOUSE,
         fmt: str = typer.Option("table", "--format", help="table, csv or json.")) -> None:
    """List committed runs with their identity."""
    wh = warehouse_of(warehouse)
    con = wh.connect()
    result = con.execute("SELECT run_id, kind, runner, model_id, n_rows, n_cases, n_errors, dataset, "
                         "left(coalesce(dataset_sha256, ''), 12) AS dataset_sha256, "
                         "left(questions_sha256, 12) AS questions_sha256, created_at FROM runs ORDER BY created_at, run_id")
    print_result(result, fmt)


@app.command()
@gate_options
def report(
    run_id: str = typer.Argument(..., help="A run id (see `laya-cases runs`)."),
    slice_: Optional[List[str]] = typer.Option(None, "--slice", help="Print this slice dimension too: "
                                               "language, model, qid or tag (repeatable)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full report JSON here."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", help="Write the Markdown tables here."),
    score_within: Optional[List[float]] = typer.Option(None, "--score-within", metavar="X",
                                                       help="Add score_within_X (repeatable; X finite, >= 0)."),
    coverage: Optional[List[float]] = typer.Option(None, "--coverage", metavar="C",
                                                   help="Add a coverage cut at C in (0, 1] to extensions (repeatable)."),
    threshold: Optional[List[float]] = typer.Option(None, "--threshold", metavar="T", help="Add a cut accepting "
                                                    "gate confidence >= T to extensions (repeatable; S9.3)."),
    bootstrap: int = typer.Option(0, "--bootstrap", metavar="B", help="Add 95% percentile intervals to every "
                                  "published ratio from B row resamples (100-100000; S9.5) [default: off]."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap's CPython random.Random stream."),
    warehouse: Optional[Path] = WAREHOUSE,
    gate=None,
) -> None:
    """Print a run's metrics (as the reference `run` prints them) and write JSON / Markdown."""
    try:
        options = report_options(slice_, score_within, coverage, json_out, bootstrap=bootstrap, seed=seed,
                                 thresholds=threshold)
        wh = warehouse_of(warehouse)
        checked = prepare_gate(gate, wh, options)
        wh.require_run(run_id)
    except UsageError as exc:
        fail(str(exc))
    emit_report(wh, run_id, options, slice_ or [], json_out, markdown_out, gate=checked)


def report_options(slice_: Optional[List[str]], score_within: Optional[List[float]],
                   coverage: Optional[List[float]], json_out: Optional[Path], *, bootstrap: int = 0,
                   seed: int = 0, thresholds: Optional[List[float]] = None) -> R.Options:
    """Check the report flags (shared by `report`, `ingest` and `run`); raises UsageError."""
    for dim in slice_ or []:
        if dim not in R.DIMENSIONS:
            raise UsageError("--slice must be one of %s, got %r" % (", ".join(R.DIMENSIONS), dim))
    return R.Options(score_within=[R.check_tolerance(t) for t in score_within or []],
                     coverages=[R.check_coverage(c) for c in coverage or []],
                     thresholds=[R.check_threshold(t) for t in thresholds or []],
                     include_cases=True, bootstrap=R.check_bootstrap(bootstrap), seed=seed)


def emit_report(wh, run_id: str, options: R.Options, slices: List[str], json_out: Optional[Path],
                markdown_out: Optional[Path], gate=None) -> dict:
    """Build a committed run's report, print it as the reference prints (S4.5), write JSON/Markdown.
    With a prepared `gate` (cli/gates.py) it is judged before printing (S6.8) and a failure exits 1."""
    try:
        doc = R.build(wh.connect([run_id]), run_id, options)
    except UsageError as exc:
        fail(str(exc))
    for tol in options.score_within:
        key = R.score_within_key(tol)
        if key not in doc["overall"]:
            n_score = sum(1 for c in doc["cases"] if (c.get("answer") or {}).get("type") == "score")
            typer.echo("laya-cases: %s has no value: %d of %d answered case(s) are score answers, and the metric "
                       "needs one whose label is a number. A threshold naming it reports it missing."
                       % (key, n_score, len(doc["cases"])), err=True)
    failures = judge(gate, doc, wh, options) if gate is not None else []
    for line in R.text_lines(doc, slices):
        typer.echo(line)
    write_text(json_out, R.dumps(doc), "report")
    write_text(markdown_out, R.markdown(doc), "markdown report")
    finish(failures)
    return doc


@app.command()
def plot(
    run_id: str = typer.Argument(..., help="A run id (see `laya-cases runs`)."),
    out: Path = typer.Option(Path("plots"), "--out", help="Directory for reliability.png and risk_coverage.png."),
    by: Optional[str] = typer.Option(None, "--by", help="Draw one reliability line per group of this slice "
                                     "dimension (language, model, qid or tag)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Draw the reliability diagram and the risk-coverage curve of a run (numbers from the report's SQL)."""
    from laya_cases.plots import plot_report

    try:
        if by is not None and by not in R.DIMENSIONS:
            raise UsageError("--by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
        wh = warehouse_of(warehouse)
        wh.require_run(run_id)
        doc = R.build(wh.connect([run_id]), run_id, R.Options(include_cases=False))
        for path in plot_report(doc, out, by):
            typer.echo(str(path))
    except UsageError as exc:
        fail(str(exc))


@app.command("sql")
def sql_command(
    query: str = typer.Argument(..., help="SQL over the views `cases`, `decisions`, `errors` and `runs`."),
    fmt: str = typer.Option("table", "--format", help="table, csv or json."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Run any SQL against the whole store, e.g. `laya-cases sql "SELECT qid, avg(correct::INT) FROM cases GROUP BY 1"`."""
    import duckdb

    wh = warehouse_of(warehouse)
    con = wh.connect()
    try:
        result = con.execute(query)
    except duckdb.Error as exc:
        fail("query failed: %s" % str(exc).splitlines()[0])
    if result is None:                   # '' or only comments: DuckDB returns no result
        fail("the query contains no SQL statement")
    print_result(result, fmt)


@app.command()
def gc(warehouse: Optional[Path] = WAREHOUSE) -> None:
    """Remove staging areas of dead writers and case partitions no committed run owns."""
    wh = warehouse_of(warehouse)
    removed = wh.gc()
    typer.echo("removed %d staging area(s), %d orphan partition(s)" % (removed["staging"], removed["orphans"]))
