"""The `laya-cases` command line: the app object, shared options and helpers.

Commands live in one module per area (store.py: validate/ingest/runs/report/sql/gc; run.py:
inference; gates.py: compare/diff) and register on `app` when imported below.
Usage errors print one line and exit 2; a failed gate exits 1.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Optional

import typer

from laya_cases.warehouse import Warehouse, resolve_root

app = typer.Typer(
    help="laya-cases: every decision a model makes on a labelled dataset is a Parquet row in a "
         "warehouse; every metric is SQL over those rows.\n\n"
         "\b\nA first session:\n"
         "  laya-cases run data/support.jsonl     # commit a run, print its report\n"
         "  laya-cases runs                       # list the committed runs\n"
         "  laya-cases report RUN --view table --slice language\n"
         "  laya-cases sql \"SELECT qid, avg(correct::INT) FROM cases GROUP BY 1\"\n"
         "  laya-cases diff RUN_A RUN_B --by language\n\n"
         "The warehouse is ./warehouse unless -w DIR or LAYA_CASES_WAREHOUSE names another. Exit codes: "
         "0 ok, 1 a gate failed, 2 a usage error. `laya-cases COMMAND --help` for each command.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    rich_markup_mode=None)       # help texts show [default: ...] literally, not as markup

WAREHOUSE = typer.Option(None, "--warehouse", "-w", metavar="DIR", envvar="LAYA_CASES_WAREHOUSE",
                         parser=lambda text: _warehouse_path(text),
                         help="Warehouse directory [default: ./warehouse].")


def fail(message: str) -> None:
    typer.echo("laya-cases: %s" % message, err=True)
    raise typer.Exit(2)


def write_text(path: Optional[Path], content: str, what: str) -> None:
    if path is None:
        return
    try:
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        fail("cannot write %s %r: %s" % (what, str(path), exc))



def warehouse_of(option: Optional[Path]) -> Warehouse:
    """The warehouse named by -w / $LAYA_CASES_WAREHOUSE / ./warehouse; one line, exit 2, when that
    path exists and is not a directory (a missing one is an empty warehouse until a run is written)."""
    wh = Warehouse(resolve_root(str(option) if option else None))
    if wh.root.exists() and not wh.root.is_dir():
        fail("warehouse %s is not a directory" % wh.root)
    return wh


def _warehouse_path(text: str) -> Path:
    """`-w ""` is a mistake, not the current directory."""
    if not text:
        raise typer.BadParameter("the warehouse path is empty")
    return Path(text)


def print_result(result, fmt: str) -> None:
    if fmt not in ("table", "csv", "json"):
        fail("--format must be table, csv or json, got %r" % fmt)
    if result.description is None:
        return
    import duckdb

    columns = [d[0] for d in result.description]
    try:
        rows = result.fetchall()
    except duckdb.Error as exc:          # e.g. a page of a store file that does not decode
        fail("query failed: %s" % str(exc).splitlines()[0])
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r)) for r in rows], ensure_ascii=False, default=str, indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        typer.echo(buf.getvalue(), nl=False)
    else:
        from laya_cases.views import render, result_table, terminal

        width, color = terminal()
        width = max(width, sum(len(c) + 2 for c in columns))      # many columns: wider lines, not wrapped names
        typer.echo(render([result_table(columns, rows)], width, color), nl=False)


def main() -> None:
    """Entry point. A usage error from argument parsing is one line and exit 2, like every other."""
    import sys

    from typer._click import exceptions as click_errors

    import laya_cases_cli.commands  # noqa: F401  (registers every command module)

    try:
        code = app(standalone_mode=False)
    except click_errors.NoArgsIsHelpError:             # bare `laya-cases`: typer already printed the help
        sys.exit(0)
    except click_errors.UsageError as exc:
        hint = " (see `%s --help`)" % exc.ctx.command_path if exc.ctx else ""
        typer.echo("laya-cases: %s%s" % (exc.format_message(), hint), err=True)
        sys.exit(2)
    except click_errors.ClickException as exc:
        typer.echo("laya-cases: %s" % exc.format_message(), err=True)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
