"""`laya-cases runs` as a terminal table: the run id whole, the rest shrunk or folded to fit (cli/console.py
prints it)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from rich import box
from rich.cells import cell_len
from rich.table import Table

from laya_cases_cli.console import _count, render


def _tail(text: Optional[str], limit: int) -> str:
    """Keep the end of a long model id or path (the informative part), marking the cut with …."""
    text = text or ""
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


_RUNS_HEADERS = ("run_id", "created", "runner", "model", "cases/err", "dataset", "data sha")


def _runs_cells(rows: Sequence[Dict[str, Any]], width: int) -> List[List[str]]:
    """`laya-cases runs` for a terminal: creation time to the minute, cases/errors in one column, an
    8-digit dataset hash; the model id and dataset path shrink to their last path part, then lose
    their start, to fit `width`; narrower still, columns fold, but never the run id. `--format csv|json`
    has every column in full."""
    cells = [[r["run_id"], (r.get("created_at") or "")[5:16].replace("T", " "), r.get("runner") or r.get("kind") or "",
              r.get("model_id") or "", "%s/%s" % (_count(r.get("n_cases")), _count(r.get("n_errors"))),
              r.get("dataset") or "", (r.get("dataset_sha256") or "")[:8]] for r in rows]
    headers = _RUNS_HEADERS
    flexible = (3, 5)

    def widest(i: int) -> int:
        return max([len(headers[i])] + [len(c[i]) for c in cells])

    room = width - sum(widest(i) for i in range(len(headers)) if i not in flexible) - 2 * (len(headers) - 1)
    if widest(3) + widest(5) > room:                  # last path part only ("all-MiniLM-L6-v2", "support.jsonl")
        cells = [[v.rstrip("/").rsplit("/", 1)[-1] if i in flexible else v for i, v in enumerate(c)] for c in cells]
    if widest(3) + widest(5) > room:                  # still too wide: share the room, cut from the left
        model = max(len(headers[3]), min(widest(3), room - min(widest(5), room // 2)))
        limits = {3: model, 5: max(len(headers[5]), room - model)}
        cells = [[_tail(v, limits[i]) if i in limits else v for i, v in enumerate(c)] for c in cells]
    return cells


def _widths(cells: List[List[str]]) -> List[int]:
    return [max([cell_len(h)] + [cell_len(c[i]) for c in cells]) for i, h in enumerate(_RUNS_HEADERS)]


def runs_table(rows: Sequence[Dict[str, Any]], width: int = 100) -> Table:
    """The runs as a rich Table (see _runs_cells)."""
    cells = _runs_cells(rows, width)
    widest = _widths(cells)
    headers = _RUNS_HEADERS
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False, collapse_padding=True)
    for i, name in enumerate(headers):         # the run id is never cut (it is what the user types next);
        if i == 0:                             # in a narrow terminal the other columns fold onto more lines
            table.add_column(name, no_wrap=True, min_width=widest[0])
        else:
            table.add_column(name, justify="right" if i == 4 else "left", overflow="fold")
    for c in cells:
        table.add_row(*c)
    return table


def runs_text(rows: Sequence[Dict[str, Any]], width: int = 100, color: bool = False) -> str:
    """The runs table as text: formatted here when it fits uncoloured (rich's bytes, without rich's
    per-cell layout: 1,000 runs in milliseconds rather than half a second), else rendered by rich."""
    cells = _runs_cells(rows, width)
    widest = _widths(cells)
    if color or sum(widest) + 2 * (len(widest) - 1) > width:
        return render([runs_table(rows, width)], width, color)

    def line(values: Sequence[str]) -> str:
        pads = [" " * (w - cell_len(v)) for v, w in zip(values, widest)]
        return "  ".join(p + v if i == 4 else v + p for i, (v, p) in enumerate(zip(values, pads))).rstrip()
    rule = "─" * (sum(widest) + 2 * (len(widest) - 1))
    return "".join(x + "\n" for x in [line(_RUNS_HEADERS), rule] + [line(c) for c in cells])
