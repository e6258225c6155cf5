"""Everything the command line prints: stdout/stderr lines, the one-line usage error, FAIL lines,
query results (table/csv/json), and the rich tables for people (`report --view table`, `runs`).

Rendering only: every number comes from the report document (report.build), the runs listing or a
query; the reference text format (report.text_lines, S4.5) stays the default and is never touched
here. Tables are packed to the console width so nothing wraps into unreadable cells.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from laya_cases.core.errors import UsageError      # catalogue and report: imported where used (`runs` starts faster)

FORMATS = ("table", "csv", "json")


# ---------------------------------------------------------------------------- lines
#: A file option given as `-` (click's convention) writes that file to stdout. The text for people is then
#: not printed, so a pipe sees the file's bytes alone; notes and errors stay on stderr. Set for each command
#: by app.check_outputs: the flag that took stdout, or None.
STDOUT = {"taken_by": None}


def _echo(text: Any, nl: bool = True) -> None:
    if STDOUT["taken_by"] is None:
        typer.echo(text, nl=nl)


def file_to_stdout(text: Any) -> None:
    """The content (text or bytes) of a file whose option was `-`."""
    typer.echo(text, nl=False)


def out(line: str = "") -> None:
    _echo(line)


def err(line: str) -> None:
    typer.echo(line, err=True)


def note(message: str) -> None:
    """A one-line message on stderr in the program's name: a usage error, a warning, where a run went."""
    err("laya-cases: %s" % message)


def committed(run_id: str, root: Any, n_errors: int) -> None:
    """Where `run` put its run (stderr; stdout is the report). Under --on-error skip it names the
    errored records, since an all-errored run prints no metric."""
    errored = ("; %d errored record(s): laya-cases sql \"SELECT row_index, qid, error FROM errors WHERE run_id = '%s'\""
               % (n_errors, run_id)) if n_errors else ""
    note("committed run %s to %s (laya-cases report %s)%s" % (run_id, root, run_id, errored))


def failures(lines: Sequence[str]) -> None:
    """One `FAIL:` line per failed gate (S6.7)."""
    for line in lines:
        err("FAIL: " + line)


def print_report(doc: Dict[str, Any], slices: Sequence[str], view: str) -> None:
    """The report on stdout: the reference's lines (S4.5), or with --view table the tables for people."""
    if view == "table":
        width, color = terminal()
        _echo(render(report_view(doc, slices, width), width, color), nl=False)
    else:
        from laya_cases.report import build as R

        for line in R.text_lines(doc, slices):
            out(line)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UsageError("--format must be table, csv or json, got %r" % fmt)


def print_result(columns: Optional[Sequence[str]], rows: Sequence[Sequence[Any]], fmt: str) -> None:
    """A query result as a table fitted to the terminal, CSV, or a JSON list of objects."""
    check_format(fmt)
    if columns is None:                  # a statement without a result set
        return
    if fmt == "json":
        out(json.dumps([dict(zip(columns, r)) for r in rows], ensure_ascii=False, default=str, indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        _echo(buf.getvalue(), nl=False)
    else:
        width, color = terminal()
        width = max(width, sum(len(c) + 2 for c in columns))      # many columns: wider lines, not wrapped names
        _echo(render([result_table(columns, rows)], width, color), nl=False)


def check_sql_output(fmt: str, out: Any, max_rows: int) -> None:
    """`sql`: --format table|csv|json|parquet; parquet needs --out, a table cannot go to --out."""
    if fmt not in FORMATS + ("parquet",):
        raise UsageError("--format must be table, csv or json, or parquet with --out, got %r" % fmt)
    if fmt == "parquet" and out is None:
        raise UsageError("--format parquet writes a file: add --out FILE")
    if fmt == "table" and out is not None:
        raise UsageError("--out writes csv, json or parquet: add --format csv|json|parquet")
    if max_rows < 1:
        raise UsageError("--max-rows must be at least 1, got %d" % max_rows)


def print_head(columns: Sequence[str], rows: Sequence[Sequence[Any]], more: Optional[int]) -> None:
    """The first rows of a query result as a table, then how many rows it left out (None: some, not
    counted, as counting would run the whole query again; listing.head)."""
    print_result(columns, rows, "table")
    hint = "(--max-rows N shows more; --format csv|json|parquet --out FILE writes all)"
    if more is None:
        out("… more rows, not counted: counting them would run the whole query again %s" % hint)
    elif more:
        out("… %d more row(s) %s" % (more, hint))


def write_bytes(chunks: Iterable[bytes]) -> None:
    """Bytes a writer produced (DuckDB's CSV or JSON), to stdout as they are."""
    for chunk in chunks:
        _echo(chunk, nl=False)


def print_runs(rows: Sequence[Dict[str, Any]]) -> None:
    width, color = terminal()
    from laya_cases_cli.runs_table import runs_text

    _echo(runs_text(rows, width, color), nl=False)


_NOTES = {"nan_dropped": "NaN, not published (S3.3)", "no_applicable_case": "no applicable case"}


def _families() -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """Metric families, in reading order (how accurate, how well calibrated, how good when selective),
    each with its metrics' names or name prefixes: the `-- family:` lines of sql/metrics/."""
    from laya_cases.query import catalogue

    return catalogue.families()


def _family(metric: str) -> int:
    families = _families()
    for i, (_, prefixes) in enumerate(families):
        if any(metric == p or (p.endswith(("_", "@")) and metric.startswith(p)) for p in prefixes):
            return i
    return len(families)


def _order(metric: str) -> Tuple[int, int, float, str]:
    """Family first, then the family's listed order, then the number in the name (score_within_2
    before score_within_10), then the name."""
    fam = _family(metric)
    families = _families()
    prefixes = families[fam][1] if fam < len(families) else ()
    pos = next((i for i, p in enumerate(prefixes) if metric == p or metric.startswith(p)), len(prefixes))
    suffix = metric[len(prefixes[pos]):] if pos < len(prefixes) else ""
    try:
        number = float(suffix)
    except ValueError:
        number = 0.0
    return fam, pos, number, metric


def fmt(value: Any) -> str:
    """4 decimals like the text view; NaN as `nan`; absent (None) blank."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return "nan" if isinstance(value, float) and math.isnan(value) else "%.4f" % value


def _count(value: Any) -> str:
    return "" if value is None else str(value)


def _label(text: str) -> Text:
    """A value from the data as one literal line: control characters escaped (a newline in a slice
    value would split its row), brackets not read as rich markup."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):
        text = "".join(c.encode("unicode_escape").decode("ascii") if ord(c) < 32 or 127 <= ord(c) < 160 else c
                       for c in text)
    return Text(text)


def _new_table(title: Optional[str] = None) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                 header_style="bold", pad_edge=False, show_edge=False)


def _width(table: Table) -> int:
    return Console(width=10_000).measure(table).maximum


def terminal() -> Tuple[int, bool]:
    """(width, color) for stdout: the terminal's width, else $COLUMNS or 100; color only on a terminal."""
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return shutil.get_terminal_size((100, 24)).columns, color


def render(renderables: Iterable[Any], width: int = 100, color: bool = False) -> str:
    """The renderables as text for a `width`-column terminal (ANSI styles only when `color`)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, emoji=False, soft_wrap=False)
    for i, item in enumerate(renderables):
        if i and isinstance(item, Table):
            console.print()
        console.print(item)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())     # no trailing pad


# ---------------------------------------------------------------------------- report
def _metric_counts(counts: Dict[str, Any]) -> Tuple[Any, Any, Any]:
    """(n, hits, n_paired) of one extensions entry; selective cuts count accepted of N paired."""
    n = counts.get("n", counts.get("accepted"))
    return n, counts.get("hits"), counts.get("n_paired", counts.get("N"))


def overall_table(doc: Dict[str, Any]) -> Table:
    overall, ext = doc["overall"], doc.get("extensions", {}).get("overall", {})
    names = set(overall) | {k for k, v in ext.items() if isinstance(v, dict) and k != "coverage"}
    rows = sorted(names, key=_order)
    has_ci = any("ci" in (ext.get(m) or {}) for m in rows)
    has_note = any((ext.get(m) or {}).get("reason") for m in rows if m not in overall)
    table = _new_table("overall")
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    for name in ("n", "hits", "n_paired"):
        table.add_column(name, justify="right", no_wrap=True)
    if has_ci:
        table.add_column("95% CI", no_wrap=True)
    if has_note:
        table.add_column("note")
    for i, metric in enumerate(rows):
        counts = ext.get(metric) or {}
        cells = [metric, fmt(overall.get(metric)), *map(_count, _metric_counts(counts))]
        if has_ci:
            ci = counts.get("ci")
            cells.append("[%s, %s]" % (fmt(ci["lower"]), fmt(ci["upper"])) if ci else "")
        if has_note:
            cells.append(_NOTES.get(counts.get("reason"), counts.get("reason") or "") if metric not in overall else "")
        last = i + 1 == len(rows) or _family(rows[i + 1]) != _family(metric)
        table.add_row(*cells, end_section=last)
    return table


def cuts_table(doc: Dict[str, Any]) -> Optional[Table]:
    """The extra coverage cuts (--coverage C, --threshold T), when any were asked for (S9.3)."""
    cuts = doc.get("extensions", {}).get("overall", {}).get("coverage")
    if not cuts:
        return None
    table = _new_table("coverage cuts")
    for name, justify in (("cut", "left"), ("selective_accuracy", "right"), ("hits", "right"),
                          ("accepted", "right"), ("N", "right"), ("coverage", "right"), ("cut confidence", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    for name, c in cuts.items():
        label = "confidence >= %s" % name.split(">=", 1)[1] if name.startswith("confidence>=") else "coverage %s" % name
        table.add_row(label, fmt(c.get("selective_accuracy")), _count(c.get("hits")), _count(c.get("accepted")),
                      _count(c.get("N")), fmt(c.get("coverage_actual")), fmt(c.get("cut_confidence")))
    return table


def case_counts(doc: Dict[str, Any], dim: str) -> Dict[str, int]:
    """Cases per group of `dim`, as the report's SQL counted them (`extensions.slices.*.n_cases`;
    a case counts once per tag occurrence, as the reference groups)."""
    groups = doc.get("extensions", {}).get("slices", {}).get(dim, {})
    return {key: ext["n_cases"] for key, ext in groups.items() if "n_cases" in ext}


def slice_tables(doc: Dict[str, Any], dim: str, width: int = 100) -> List[Table]:
    """One table per group of columns that fits `width`: a row per group, metrics as columns."""
    groups = doc.get("slices", {}).get(dim, {})
    if not groups:
        return [_new_table("by %s: no groups" % dim)]
    metrics = sorted({m for values in groups.values() for m in values}, key=_order)
    counts = case_counts(doc, dim)

    def build(columns: Sequence[str], families: Sequence[str]) -> Table:
        title = "by %s" % dim + (" (%s)" % ", ".join(families) if families else "")
        table = _new_table(title)
        table.add_column(dim, no_wrap=True, overflow="ellipsis", max_width=32)
        table.add_column("cases", justify="right", no_wrap=True)
        for metric in columns:
            table.add_column(metric, justify="right", no_wrap=True)
        for key in sorted(groups):
            table.add_row(_label(key), _count(counts.get(key)), *[fmt(groups[key].get(m)) for m in columns])
        return table

    tables: List[Table] = []
    current: List[str] = []
    names: List[str] = []
    by_family: Dict[int, List[str]] = {}
    for metric in metrics:
        by_family.setdefault(_family(metric), []).append(metric)
    for fam, columns in sorted(by_family.items()):
        label = _families()[fam][0] if fam < len(_families()) else "other"
        if _width(build(current + columns, names + [label])) <= width:
            current, names = current + columns, names + [label]
            continue
        if current:
            tables.append(build(current, names))
        current, names = [], [label]
        for metric in columns:                       # a family wider than the screen: split it
            if current and _width(build(current + [metric], names)) > width:
                tables.append(build(current, names))
                current = []
            current.append(metric)
    if current or not tables:
        tables.append(build(current, names))
    return tables


def report_view(doc: Dict[str, Any], slice_dims: Sequence[str] = (), width: int = 100) -> List[Any]:
    """Everything `report --view table` prints, in order."""
    run = doc.get("extensions", {}).get("run", {})
    out: List[Any] = []
    if run:
        out.append("run %s (%s): %s rows, %s cases, %s errors" % (
            run.get("run_id"), run.get("kind"), run.get("n_rows"), run.get("n_cases"), run.get("n_errors")))
    out.append(overall_table(doc))
    cuts = cuts_table(doc)
    if cuts is not None:
        out.append(cuts)
    for dim in slice_dims:
        out.extend(slice_tables(doc, dim, width))
    return out


# ---------------------------------------------------------------------------- sql
def result_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A query result: floats to 4 decimals, NULL blank, numbers right-aligned. Names and values are
    literal text (`[/]` is not rich markup: parsing every cell as markup also made wide results slow)."""
    table = _new_table()
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in rows)
        table.add_column(_label(str(name)), justify="right" if numeric else "left")
    for r in rows:
        table.add_row(*[_label(fmt(v) if isinstance(v, float) else _count(v)) for v in r])
    return table
