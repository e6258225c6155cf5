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
    help="laya-cases: every evaluation decision is a Parquet row; every metric is SQL over them.\n\n"
         "Typical flow: `laya-cases ingest answers.jsonl` (or `run`), then `laya-cases report RUN`, "
         "and `laya-cases sql \"SELECT ...\"` for your own questions.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    rich_markup_mode=None)       # help texts show [default: ...] literally, not as markup

WAREHOUSE = typer.Option(None, "--warehouse", "-w", metavar="DIR", envvar="LAYA_CASES_WAREHOUSE",
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
    return Warehouse(resolve_root(str(option) if option else None))


def print_result(result, fmt: str) -> None:
    if fmt not in ("table", "csv", "json"):
        fail("--format must be table, csv or json, got %r" % fmt)
    if result.description is None:
        return
    columns = [d[0] for d in result.description]
    rows = result.fetchall()
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r)) for r in rows], ensure_ascii=False, default=str, indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        typer.echo(buf.getvalue(), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(*columns, show_lines=False, header_style="bold")
        for r in rows:
            table.add_row(*["" if v is None else (("%.4f" % v) if isinstance(v, float) else str(v)) for v in r])
        Console(width=max(100, sum(len(c) + 3 for c in columns))).print(table)


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
