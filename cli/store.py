"""Store commands: validate, ingest, runs, report, sql, gc, check."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import List, Optional

import duckdb
import typer

from laya_cases import UsageError
from laya_cases import dataset as D
from laya_cases import report as R
from laya_cases_cli.app import WAREHOUSE, app, fail, print_result, warehouse_of, write_text
from laya_cases_cli.gates import finish, gate_options, judge, prepare_gate


# The report flags, shared by `report` and `run` (one definition each).
JSON_OUT = typer.Option(None, "--json", metavar="FILE", help="Write the full report JSON here (reference keys "
                        "plus `extensions`).")
MARKDOWN_OUT = typer.Option(None, "--markdown", metavar="FILE", help="Write the metrics as Markdown tables here.")
SLICE = typer.Option(None, "--slice", metavar="DIM", help="Also print the metrics per group of DIM: language, model, "
                     "qid or tag (repeatable).")
SCORE_WITHIN = typer.Option(None, "--score-within", metavar="X", help="Add score_within_X: share of score answers "
                            "within X of the label (repeatable).")
COVERAGE = typer.Option(None, "--coverage", metavar="C", help="Add selective accuracy at coverage C in (0, 1] to "
                        "extensions (repeatable; S9.3).")
THRESHOLD = typer.Option(None, "--threshold", metavar="T", help="Add a cut accepting gate confidence >= T to "
                         "extensions (repeatable; S9.3).")
BOOTSTRAP = typer.Option(0, "--bootstrap", metavar="B", show_default=False, help="Add 95% percentile intervals "
                         "to every published ratio from B row resamples (100-100000; S9.5) [default: off].")
SEED = typer.Option(0, "--seed", metavar="S", help="Seed of the bootstrap's CPython random.Random stream.")
VIEW = typer.Option("text", "--view", metavar="text|table",
                    help="text: the reference's lines (S4.5); table: readable tables with counts, fitted "
                         "to the terminal.")


def check_view(view: str) -> None:
    if view not in ("text", "table"):
        raise UsageError("--view must be text or table, got %r" % view)


@app.command()
def validate(dataset: Path = typer.Argument(..., metavar="DATASET", help="Labelled dataset (JSON Lines, spec S1)."),
             strict: bool = typer.Option(False, "--strict", help="Also check label types, membership and ranges "
                                         "and question bodies (S9.6); report every finding.")) -> None:
    """Check a labelled dataset (spec S1); writes nothing.

    Prints `<rows> examples, <q> question id(s): <ids>` (S1.6). The first problem is one line naming
    file:line and field, exit 2; --strict lists every finding.

    \b
    Example:
      laya-cases validate data/support.jsonl --strict
    """
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
    answers: Path = typer.Argument(..., metavar="ANSWERS", help="JSON Lines: dataset rows plus \"answers\": "
                                   "{qid: answer} and optional \"latency_ms\"."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", metavar="FILE", help="The labelled dataset the answers "
                                           "were produced from: its bytes become dataset_sha256 and every row must "
                                           "match."),
    warehouse: Optional[Path] = WAREHOUSE,
    gate=None,
) -> None:
    """Commit recorded answers as a run; prints its id.

    The decisions are stored exactly as `run` stores a model's. With a gate flag the report is
    printed and gated as by `report` (a bad baseline or policy is refused before anything is
    committed).

    \b
    Example:
      laya-cases ingest data/support.answers.jsonl --dataset data/support.jsonl
    """
    from laya_cases.ingest import ingest as do_ingest
    from laya_cases.progress import RowProgress, count_rows

    wh = warehouse_of(warehouse)
    try:
        checked = prepare_gate(gate, wh, R.Options(), early_baseline=True)
        with RowProgress("ingest") as bar:
            if bar.enabled:                      # a total for the ETA, only when someone watches
                bar.set_total(count_rows(str(answers)))
            rid = do_ingest(wh, str(answers), run_id=run_id, dataset_path=str(dataset) if dataset else None,
                            progress=bar.update).run_id
    except UsageError as exc:
        fail(str(exc))
    typer.echo(rid)
    if checked is not None:
        emit_report(wh, rid, R.Options(), [], None, None, gate=checked)


@app.command()
def runs(warehouse: Optional[Path] = WAREHOUSE,
         fmt: str = typer.Option("table", "--format", metavar="table|csv|json",
                                 help="table: fits the terminal; csv, json: every column in full.")) -> None:
    """List the committed runs, oldest first.

    The table shows short hashes and cases/errors; csv and json have every identity column
    (config_json and settings_json are in `laya-cases sql "SELECT * FROM runs"`).

    \b
    Example:
      laya-cases runs --format json
    """
    wh = warehouse_of(warehouse)
    con = connect_all(wh)
    result = con.execute("SELECT run_id, kind, runner, model_id, model_revision, n_rows, n_cases, n_errors, dataset, "
                         "dataset_sha256, labelled_rows_sha256, questions_sha256, schema_version, created_at "
                         "FROM runs ORDER BY created_at, run_id")
    if fmt != "table":
        print_result(result, fmt)
        return
    from laya_cases.views import render, runs_table, terminal

    rows = [dict(zip([d[0] for d in result.description], r)) for r in result.fetchall()]
    if not rows:
        typer.echo("no committed runs in %s" % wh.root)
        return
    width, color = terminal()
    typer.echo(render([runs_table(rows, width)], width, color), nl=False)


@app.command()
@gate_options
def report(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    slice_: Optional[List[str]] = SLICE,
    json_out: Optional[Path] = JSON_OUT,
    markdown_out: Optional[Path] = MARKDOWN_OUT,
    score_within: Optional[List[float]] = SCORE_WITHIN,
    coverage: Optional[List[float]] = COVERAGE,
    threshold: Optional[List[float]] = THRESHOLD,
    bootstrap: int = BOOTSTRAP,
    seed: int = SEED,
    view: str = VIEW,
    warehouse: Optional[Path] = WAREHOUSE,
    gate=None,
) -> None:
    """Print a committed run's metrics; write JSON / Markdown.

    stdout is the reference's text (S4.5), byte for byte what `run` printed; --view table prints
    tables with counts instead (the files are the same either way). A failed gate exits 1.

    \b
    Examples:
      laya-cases report demo --slice language --json report.json
      laya-cases report demo --view table --slice language
    """
    try:
        options = report_options(slice_, score_within, coverage, json_out, bootstrap=bootstrap, seed=seed,
                                 thresholds=threshold)
        check_view(view)
        wh = warehouse_of(warehouse)
        checked = prepare_gate(gate, wh, options)
        wh.require_run(run_id)
    except UsageError as exc:
        fail(str(exc))
    emit_report(wh, run_id, options, slice_ or [], json_out, markdown_out, gate=checked, view=view)


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
                markdown_out: Optional[Path], gate=None, view: str = "text") -> dict:
    """Build a committed run's report, print it as the reference prints (S4.5), write JSON/Markdown.
    With a prepared `gate` (cli/gates.py) it is judged before printing (S6.8) and a failure exits 1."""
    # the case list is the big part of a report: build it only for the JSON file or a gate that reads it
    options = dataclasses.replace(options, include_cases=json_out is not None or gate is not None)
    try:
        con = wh.connect([run_id])
        doc = R.build(con, run_id, options)
    except UsageError as exc:
        fail(str(exc))
    except duckdb.Error as exc:          # a page that does not decode: the footer check cannot see it
        fail("cannot read run %r: %s (see `laya-cases check`)" % (run_id, str(exc).splitlines()[0]))
    missing = [R.score_within_key(t) for t in options.score_within if R.score_within_key(t) not in doc["overall"]]
    if missing:
        counts = R.answer_type_counts(con, run_id)
        for key in missing:
            typer.echo("laya-cases: %s has no value: %d of %d answered case(s) are score answers, and the metric "
                       "needs one whose label is a number. A threshold naming it reports it missing."
                       % (key, counts["n_score"], counts["n_cases"]), err=True)
    failures = judge(gate, doc, wh, options) if gate is not None else []
    if view == "table":                  # opt-in, for people; the files below are the same either way
        from laya_cases.views import render, report_view, terminal

        width, color = terminal()
        typer.echo(render(report_view(doc, slices, width), width, color), nl=False)
    else:
        for line in R.text_lines(doc, slices):
            typer.echo(line)
    write_text(json_out, R.dumps(doc), "report")
    write_text(markdown_out, R.markdown(doc), "markdown report")
    finish(failures)
    return doc


@app.command()
def plot(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    out: Path = typer.Option(Path("plots"), "--out", metavar="DIR", help="Directory for reliability.png and "
                             "risk_coverage.png (created if missing)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="One reliability line per group of DIM: "
                                     "language, model, qid or tag."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Draw a run's reliability and risk-coverage plots (PNG).

    Writes reliability.png and risk_coverage.png into --out and prints their paths; the numbers
    are the report's (same SQL).

    \b
    Example:
      laya-cases plot demo --by language --out plots
    """
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
    query: str = typer.Argument(..., metavar="QUERY", help="One DuckDB SQL query over the views cases, decisions, "
                                "errors, runs and slice_sets."),
    fmt: str = typer.Option("table", "--format", metavar="table|csv|json", help="Output format."),
    allow_write: bool = typer.Option(False, "--allow-write", help="Also accept COPY ... TO '<file>' with the file "
                                     "outside the warehouse."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Query the whole warehouse (read-only); prints the result.

    Views: cases (one row per answered question), errors (rows that failed), decisions (both),
    runs (one row per committed run), slice_sets. Columns: docs/schema.md. The query is one
    statement that reads (SELECT, WITH, DESCRIBE, SUMMARIZE, EXPLAIN); COPY, EXPORT, ATTACH,
    INSTALL, LOAD, SET, CREATE and several statements at once are refused (exit 2). A damaged
    run is left out, with a warning naming it.

    \b
    Examples:
      laya-cases sql "SELECT qid, avg(correct::INT) AS acc FROM cases GROUP BY 1"
      laya-cases sql "COPY (FROM cases) TO 'cases.parquet'" --allow-write
    """
    from laya_cases.sql_guard import check_query

    wh = warehouse_of(warehouse)
    try:
        check_query(query, wh.root, allow_write)
        con = connect_all(wh)
    except UsageError as exc:
        fail(str(exc))
    con.execute("SET autoinstall_known_extensions = false")      # no download, no write to ~/.duckdb
    con.execute("SET lock_configuration = true")                 # and the query cannot undo that
    try:
        result = con.execute(query)
    except duckdb.Error as exc:
        fail("query failed: %s" % str(exc).splitlines()[0])
    if result is None:                   # '' or only comments: DuckDB returns no result
        fail("the query contains no SQL statement")
    print_result(result, fmt)


def connect_all(wh):
    """All committed runs; one stderr warning per damaged run left out (`laya-cases check` lists all)."""
    try:
        con = wh.connect()
    except UsageError as exc:
        fail(str(exc))
    for rid, problem in sorted(wh.damaged.items()):
        typer.echo("laya-cases: warning: run %r is damaged and left out: %s" % (rid, problem), err=True)
    return con


@app.command()
def gc(warehouse: Optional[Path] = WAREHOUSE) -> None:
    """Remove what killed writers left behind.

    Deletes staging areas `_staging/<id>.<pid>.<nonce>` whose writer is gone and case partitions
    `cases/run_id=<id>` that no runs entry owns; prints each removed path, then how many of each.
    Committed runs, a damaged run's files and anything laya-cases did not name are never touched.

    \b
    Example:
      laya-cases gc -w warehouse
    """
    wh = warehouse_of(warehouse)
    try:
        removed = wh.gc()
    except (UsageError, OSError) as exc:
        fail("gc of %s failed: %s" % (wh.root, exc))
    for path in removed["staging"] + removed["orphans"]:
        typer.echo(path)
    typer.echo("removed %d staging area(s), %d orphan partition(s)" % (len(removed["staging"]),
                                                                      len(removed["orphans"])))


@app.command()
def check(warehouse: Optional[Path] = WAREHOUSE) -> None:
    """Verify every committed run's files; lists each problem.

    Reads every Parquet file of every run (footer and data) and compares its records with the runs
    table (n_cases, n_errors). Prints one line per problem naming the file, or `ok: N run(s)`.
    Exit 0 when all is well, 1 when a problem was found, 2 on a usage error (e.g. a bad -w).
    A damaged run is left out of `runs`, `sql` and `report`; remove or restore its files.

    \b
    Example:
      laya-cases check -w warehouse
    """
    from laya_cases.store_check import check as check_store

    wh = warehouse_of(warehouse)
    try:
        problems = check_store(wh)
        n_runs = len(wh.run_ids())
    except UsageError as exc:
        fail(str(exc))
    for line in problems:
        typer.echo(line)
    if problems:
        typer.echo("laya-cases: %d problem(s) in %s" % (len(problems), wh.root), err=True)
        raise typer.Exit(1)
    typer.echo("ok: %d run(s)" % n_runs)
