"""`laya-cases stability`, `audit` and `relabel`: how much reruns of one dataset disagree, which gold labels
look wrong across runs, and the corrections accepted (laya_cases/report/stability.py, report/audit.py;
docs/stability.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases.gates import runner as G
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.gates import finish
from laya_cases_cli.options import WAREHOUSE

RELABELS = typer.Option(False, "--relabels", help="Apply the store's accepted relabels (laya-cases relabel) "
                        "to the labels first [default: the labels as committed].")


@app.command(short_help="How much reruns of one dataset disagree, case by case.")
def stability(
    runs: List[str] = typer.Argument(..., metavar="RUN...", help="Two or more runs of the same dataset."),
    by: Optional[str] = typer.Option(None, "--by", metavar="DIM", help="Also per group of DIM: language, model, "
                                     "qid or tag."),
    show: int = typer.Option(10, "--show", metavar="N", help="Print the first N unstable cases."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the stability document "
                                            "as JSON here (every unstable case)."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Write the tables as one "
                                            "self-contained HTML file here (no script)."),
    max_unstable_rate: Optional[str] = typer.Option(None, "--max-unstable-rate", metavar="R", help="Fail (exit 1) "
                                                    "when more than R of the compared cases are unstable."),
    relabels: bool = RELABELS,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Reruns of one dataset (another seed, device, batch size, a quantized copy, another server):
    which cases flip, and how much a single run's accuracy could move.

    A case is compared when two or more runs scored it, and unstable when some runs got it right and
    others wrong. Per group: the unstable rate, the mean agreement on one answer, the expected range
    of a single run's accuracy (mean -/+ 1.96 sd, each case right with its share of runs), the floor
    and ceiling (cases every run got right, some run got right), and the runs' own lowest and highest
    accuracy. A delta between two runs inside the expected range is rerun noise.

    \b
    Examples:
      laya-cases stability base seed1 seed2 --by language
      laya-cases stability base int8 --max-unstable-rate 0.05 --json stability.json
      laya-cases stability base seed1 seed2 --html stability.html
    """
    from laya_cases.report import stability as T

    if show < 0:
        raise UsageError("--show must be >= 0, got %d" % show)
    bound = G.parse_limit("--max-unstable-rate", max_unstable_rate)
    doc = T.stability(warehouse_of(warehouse), runs, by=by, max_unstable_rate=bound, relabels=relabels)
    width, color = console.terminal()
    console.out(T.header(doc))
    console.out(console.render([console.result_table(T.COLUMNS, T.table_rows(doc))], width, color).rstrip("\n"))
    console.out("")
    console.out("accuracy a single run could show (choice and noul cases pooled)")
    console.out(console.render([console.result_table(T.RANGE_COLUMNS, T.range_rows(doc))], width,
                               color).rstrip("\n"))
    console.out("")
    console.out("accuracy of each run over the compared cases: " + ", ".join(
        "%s %.4f" % (r["run_id"], r["accuracy"]) for r in doc["run_accuracy"].get("overall", [])))
    cases = doc["unstable_cases"]
    if cases and show:
        console.out("")
        console.out("unstable cases (%d%s):" % (len(cases), "" if len(cases) <= show else "; the first %d, --show N "
                                                "for more" % show))
        console.out(console.render([console.result_table(T.CASE_COLUMNS, T.case_rows(doc, show))], width,
                                   color).rstrip("\n"))
    if json_out is not None:
        write_text(json_out, json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "stability")
    if html_out is not None:
        from laya_cases.views.html.runset_view import stability_html
        write_text(html_out, stability_html(doc), "stability HTML")
    finish(doc["gate"]["failures"])


@app.command(short_help="Cases whose gold label looks wrong across runs.")
def audit(
    runs: List[str] = typer.Option(..., "--runs", metavar="RUN", help="Runs of the same dataset (different "
                                   "models); repeat the option or separate ids by commas."),
    top: int = typer.Option(20, "--top", metavar="N", help="List the N likeliest cases."),
    min_agree: int = typer.Option(2, "--min-agree", metavar="K", help="At least K runs must give the same wrong "
                                  "label."),
    csv_out: Optional[Path] = typer.Option(None, "--csv", metavar="FILE", help="Write the queue as CSV here, with "
                                           "empty accept and note columns for a reviewer."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the queue as JSON here."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Write the queue as one "
                                            "self-contained HTML file here (no script)."),
    relabels: bool = RELABELS,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """A review queue of gold labels: the cases many runs got wrong with one and the same other label,
    confidently, where the label is likeliest to be wrong.

    Score = the share of runs agreeing on that label x their mean confidence in it; the counts behind
    it are in every row. Accept a correction with `laya-cases relabel`.

    \b
    Examples:
      laya-cases audit --runs minilm,use,smollm2 --top 20 --csv queue.csv
    """
    from laya_cases.report import audit as A

    ids = [r for item in runs for r in item.split(",") if r]
    doc = A.queue(warehouse_of(warehouse), ids, top=top, min_agree=min_agree, relabels=relabels)
    width, color = console.terminal()
    console.out(A.header(doc))
    if doc["cases"]:
        console.out(console.render([console.result_table(A.COLUMNS, A.table_rows(doc))], width, color).rstrip("\n"))
    write_text(csv_out, A.to_csv(doc), "audit CSV")
    if json_out is not None:
        write_text(json_out, json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "audit")
    if html_out is not None:
        from laya_cases.views.html.runset_view import audit_html
        write_text(html_out, audit_html(doc), "audit HTML")


@app.command(short_help="Record a corrected gold label (never edits a run).")
def relabel(
    run: Optional[str] = typer.Argument(None, metavar="RUN", help="A run of the dataset whose label is wrong."),
    row: Optional[int] = typer.Option(None, "--row", metavar="N", help="The case's dataset row (row_index, "
                                      "0-based, as audit prints it)."),
    qid: Optional[str] = typer.Option(None, "--qid", metavar="Q", help="The case's question id."),
    to: Optional[str] = typer.Option(None, "--to", metavar="LABEL", help="The correct label: a choice label, or "
                                     "true/false for a noul question."),
    note: str = typer.Option("", "--note", metavar="TEXT", help="Why (kept with the relabel)."),
    list_: bool = typer.Option(False, "--list", help="List the relabels the store holds instead."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Record an accepted gold-label correction in the store, beside the runs: every run of the
    dataset keeps its files; `report`, `stability` and `audit` with --relabels read the corrected
    label and correctness, anything else reads the labels as committed.

    \b
    Examples:
      laya-cases relabel minilm --row 15 --qid intent --to delivery --note "asks where the parcel is"
      laya-cases relabel --list
    """
    from laya_cases.report import audit as A

    wh = warehouse_of(warehouse)
    if list_:
        rows = [[r["seq"], r["row_index"], r["line_no"], r["qid"], r["from_json"], r["to_json"], r["source_run"],
                 r["note"]] for r in A.listing(wh)]
        console.out(console.render([console.result_table(
            ("seq", "row", "line", "qid", "from", "to", "run", "note"), rows)], *console.terminal()).rstrip("\n"))
        return
    missing = [flag for flag, value in (("RUN", run), ("--row", row), ("--qid", qid), ("--to", to)) if value is None]
    if missing:
        raise UsageError("relabel needs %s (or --list)" % ", ".join(missing))
    made = A.relabel(wh, run, row, qid, to, note)
    console.note("relabel %d: row %d %s %s -> %s, for every run of the dataset of %s (applied with --relabels)"
                 % (made["seq"], made["row_index"], made["qid"], made["from_json"], made["to_json"], run))
