"""Store commands: validate, ingest, runs, report, sql, gc, check."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases.query import listing
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE, gate_options, report_options
from laya_cases.query.sql import connect

if TYPE_CHECKING:           # the report code is imported by the commands that use it: `runs` starts faster
    from laya_cases.report import build as R
    from laya_cases.report.request import ReportRequest


@app.command()
def validate(dataset: Path = typer.Argument(..., metavar="DATASET", help="Labelled dataset (JSON Lines)."),
             strict: bool = typer.Option(False, "--strict", help="Also check label types, membership and ranges "
                                         "and question bodies; report every finding.")) -> None:
    """Check a labelled dataset; writes nothing.

    Prints `<rows> examples, <q> question id(s): <ids>`. The first problem is one line naming
    file:line and field, exit 2; --strict lists every finding.

    \b
    Example:
      laya-cases validate data/support.jsonl --strict
    """
    from laya_cases.core import dataset as D

    rows = D.load(str(dataset))
    if strict:
        from laya_cases.core.strict import row_findings

        findings = [f for row in rows for f in row_findings(str(dataset), row)]
        for finding in findings:
            console.err(("" if finding.error else "warning: ") + str(finding))
        errors = sum(1 for f in findings if f.error)
        if errors:
            raise UsageError("%s: %d error(s) under --strict" % (dataset, errors))
    console.out(D.summary_line(rows))


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
    from laya_cases.report import build as R
    from laya_cases.record.ingest.answers import ingest as do_ingest
    from laya_cases.report.request import ReportRequest
    from laya_cases_cli.gates import prepare_gate
    from laya_cases_cli.progress import RowProgress, count_rows

    wh = warehouse_of(warehouse)
    checked = prepare_gate(gate, wh, R.Options(), early_baseline=True)
    with RowProgress("ingest") as bar:
        if bar.enabled:                      # a total for the ETA, only when someone watches
            bar.set_total(count_rows(str(answers)))
        rid = do_ingest(wh, str(answers), run_id=run_id, dataset_path=str(dataset) if dataset else None,
                        progress=bar.update).run_id
    console.out(rid)
    if checked is not None:
        emit_report(wh, rid, ReportRequest(), R.Options(), gate=checked)


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
    columns, rows = listing.runs(connect_all(wh, functions=False, runs_only=True))   # no macros (numpy), no case views
    leftovers = wh.leftovers_note()
    if leftovers:                               # dead writers' staging areas: say so, on stderr
        console.note("note: " + leftovers)
    for line in wh.incomplete_notes():          # incomplete runs are not listed: each is named on stderr
        console.note("note: " + line)
    if fmt != "table":
        console.print_result(columns, rows, fmt)
    elif not rows:
        console.out("no committed runs in %s" % wh.root)
    else:
        console.print_runs([dict(zip(columns, r)) for r in rows])


@app.command()
@gate_options
@report_options
def report(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Judge the gates of an incomplete run (a "
                                       "sharded run with shards missing) on its committed rows, saying so."),
    warehouse: Optional[Path] = WAREHOUSE,
    report: ReportRequest = None,
    gate=None,
) -> None:
    """Print a committed run's metrics; write JSON / Markdown.

    stdout is the reference's text, byte for byte what `run` printed; --view table prints
    tables with counts instead (the files are the same either way). A failed gate exits 1.

    \b
    Examples:
      laya-cases report demo --slice language --json report.json
      laya-cases report demo --view table --slice language
    """
    from laya_cases_cli.gates import prepare_gate     # here, not at the top: `runs` needs no gate (pyarrow)

    from laya_cases.report.session import ReportSession

    options = report.options()
    wh = warehouse_of(warehouse)
    session = ReportSession(wh, run_id, options, gate.baseline if gate is not None else None, report.relabels)
    checked = prepare_gate(gate, wh, options, session=session)
    if checked is not None and not allow_partial and wh.run_state(run_id) == "incomplete":
        raise UsageError("%s; a gate needs a complete run (--allow-partial judges the committed rows)"
                         % wh.incomplete_note(run_id))
    wh.require_run(run_id, incomplete=checked is None or allow_partial)   # a gate refuses an incomplete run
    if wh.incomplete_note(run_id):
        console.note("note: %s; this report covers the committed rows only%s" % (
            wh.incomplete_note(run_id), "; gates judged on them (--allow-partial)" if checked is not None else ""))
    emit_report(wh, run_id, report, options, gate=checked, session=session)


def emit_report(wh, run_id: str, request: ReportRequest, options: R.Options, gate=None, quiet: bool = False,
                session=None) -> dict:
    """Build a committed run's report, print it as the reference prints (S4.5) or as tables, write
    JSON/Markdown/HTML, all through one report session (one connection to the store). With a prepared
    `gate` (cli/gates.py) it is judged before printing (S6.8) and a failure exits 1."""
    from laya_cases.report import build as R
    from laya_cases.report import stream as report_json
    from laya_cases.report.session import ReportSession
    from laya_cases_cli.gates import finish, judge
    from laya_cases_cli.progress import StepProgress

    if session is None:
        session = ReportSession(wh, run_id, options, gate.baseline_ref if gate is not None else None,
                                request.relabels)
    with StepProgress(quiet=quiet) as bars:   # a bar on a terminal's stderr, gone before anything is printed
        session.options = dataclasses.replace(options, phase=bars.phases("report"))
        if options.bootstrap:
            session.options = dataclasses.replace(session.options, progress=bars.step("bootstrap", "replicates"))
        doc, warnings = session.document(with_cases=gate is not None)   # a gate reads cases
    for line in warnings:
        console.note(line)
    if request.relabels:
        console.note("note: the gold labels as the store's relabels correct them (--relabels; laya-cases relabel --list)")
    for line in doc["extensions"]["run"].get("import_notes") or ():    # an imported log says what it lacks
        console.note("note: " + line)
    failures = judge(gate, doc, wh, options, session) if gate is not None else []
    if not (request.json_to_stdout or quiet):
        console.print_report(doc, request.slices, request.view)     # the files are the same for every view
    if request.json_out is not None:            # cases streamed from the store, not from `doc`
        with StepProgress(quiet=request.json_to_stdout and console.stdout_is_terminal()) as bars:
            report_json.save(str(request.json_out), doc, wh, run_id, options.score_within,
                             with_cases=not request.no_cases, progress=bars.step("report JSON", "cases"),
                             strict_json=request.json_strict,
                             con=session.duckdb if not request.no_cases else None)
    write_text(request.markdown_out, R.markdown(doc), "markdown report")
    if request.html_out is not None:           # self-contained HTML (laya_cases/html, docs/html.md)
        from laya_cases.views.html.files import report_file
        write_text(request.html_out, report_file(wh, run_id, doc, session.duckdb), "HTML report")
    finish(failures)
    return doc


@app.command(short_help="Draw a run's plots as PNG: calibration and more.")
def plot(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    out: Path = typer.Option(Path("plots"), "--out", metavar="DIR", help="Directory for reliability.png and "
                             "risk_coverage.png (created if missing)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="One reliability line per group of DIM "
                                     "(language, model, qid or tag), and confidence.png: a histogram per group."),
    kind: str = typer.Option("calibration", "--kind", metavar="KIND", help="calibration (reliability.png, "
                             "risk_coverage.png); languages (languages.png: accuracy with its bootstrap interval and "
                             "ECE per language); shortlist (shortlist_recall.png: recall@k over k); robustness "
                             "(robustness_agreement.png: agreement per transform and language)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", metavar="B", help="--kind languages: bootstrap replicates "
                                  "of the accuracy intervals (seed 0)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Draw a run's reliability and risk-coverage plots (PNG), or another --kind.

    Writes reliability.png and risk_coverage.png into --out and prints their paths; the numbers
    are the report's (same SQL).

    \b
    Example:
      laya-cases plot demo --by language --out plots
      laya-cases plot b77-k10 --kind shortlist
    """
    from laya_cases.report import build as R
    from laya_cases.views.plot_kinds import plot_kind
    from laya_cases.views.plots import plot_report

    if by is not None and by not in R.DIMENSIONS:
        raise UsageError("--by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
    wh = warehouse_of(warehouse)
    wh.require_run(run_id)
    if kind != "calibration":                    # the other kinds: laya_cases/views/plot_kinds.py
        for path in plot_kind(wh, run_id, kind, out, R.check_bootstrap(bootstrap)):
            console.out(str(path))
        return
    doc = R.build(connect(wh, [run_id]), run_id, R.Options(include_cases=False))
    for path in plot_report(doc, out, by):
        console.out(str(path))


@app.command("sql")
def sql_command(
    query: str = typer.Argument(..., metavar="QUERY", help="One DuckDB SQL query over the views cases, decisions, "
                                "errors, runs and slice_sets."),
    fmt: str = typer.Option("table", "--format", metavar="table|csv|json|parquet", help="Output format: table "
                            "(the first --max-rows rows), or every row as csv, json (strict: NaN/Infinity are "
                            "null) or parquet (needs --out), written by DuckDB."),
    out: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Write the whole result here (csv, json "
                                       "or parquet; outside the warehouse) instead of to stdout."),
    max_rows: int = typer.Option(40, "--max-rows", metavar="N", help="Rows the table shows; it says how many "
                                 "more there are."),
    allow_write: bool = typer.Option(False, "--allow-write", hidden=True, help="Gone: sql runs no COPY; "
                                     "--out writes the result (kept to say so in one line)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", metavar="SECONDS", help="Interrupt the query after "
                                            "SECONDS (exit 2) [default: no limit]."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Query the whole warehouse (read-only); prints the result.

    Views: cases (one row per answered question), errors (rows that failed), decisions (both),
    runs (one row per committed run), slice_sets. Columns: docs/schema.md. The query is one
    statement that reads (SELECT, WITH, PIVOT, DESCRIBE, SUMMARIZE, EXPLAIN), run as a subquery so
    nothing else can run: COPY, EXPORT, ATTACH, INSTALL, LOAD, SET, CREATE and several statements
    are refused (exit 2); --out is the only writer. A damaged run is left out, with a warning.

    \b
    Examples:
      laya-cases sql "SELECT qid, avg(correct::INT) AS acc FROM cases GROUP BY 1"
      laya-cases sql "FROM cases" --format parquet --out cases.parquet
    """
    from laya_cases.query.guard import check_output, check_query

    wh = warehouse_of(warehouse)
    text = check_query(query, wh.root, allow_write)
    if timeout is not None and not 0 < timeout < 1e9:
        raise UsageError("--timeout must be a number of seconds > 0, got %r" % timeout)
    con = connect_all(wh, functions=listing.uses_library(query))
    with listing.time_limit(con, timeout):
        rel = listing.user_relation(con, text)
        console.check_sql_output(fmt, out, max_rows)   # after the query's own errors, before its rows are read
        if out == "-" and fmt != "parquet":      # `-`: the file's rows to stdout, as without --out
            for chunk in listing.result_chunks(con, rel, fmt):
                console.file_to_stdout(chunk)
        elif out is not None:
            n = listing.write_result(con, rel, fmt, "/dev/stdout" if out == "-" else check_output(out, wh.root))
            console.note("wrote %d row(s) to %s" % (n, out))
        elif fmt == "table":
            console.print_head(*listing.head(con, rel, max_rows))
        else:
            console.write_bytes(listing.result_chunks(con, rel, fmt))


def connect_all(wh, functions: bool = True, runs_only: bool = False):
    """All committed runs; one stderr warning per damaged run left out (`laya-cases check` lists all)."""
    con = connect(wh, functions=functions, runs_only=runs_only)
    for rid, problem in sorted(wh.damaged.items()):
        console.note("warning: run %r is damaged and left out: %s" % (rid, problem))
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
        raise UsageError("gc of %s failed: %s" % (wh.root, exc)) from None
    for path in removed["staging"] + removed["orphans"]:
        console.out(path)
    console.out("removed %d staging area(s), %d orphan partition(s)" % (len(removed["staging"]),
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
    from laya_cases.store.check import check as check_store

    wh = warehouse_of(warehouse)
    problems = check_store(wh)
    n_runs = len(wh.run_ids())
    for line in problems:
        console.out(line)
    if problems:
        console.note("%d problem(s) in %s" % (len(problems), wh.root))
        raise typer.Exit(1)
    console.out("ok: %d run(s)" % n_runs)
