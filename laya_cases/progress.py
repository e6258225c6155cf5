"""A progress line on stderr for long work (rows done, rows/s); silent when stderr is not a terminal."""
from __future__ import annotations

import sys
from typing import Optional

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.console import Console


class RowProgress:
    def __init__(self, label: str, total: Optional[int] = None):
        self.label, self.total = label, total
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.speed:>8.0f} rows/s" if False else "rows"), TimeElapsedColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                                  disable=not sys.stderr.isatty())
        self._task = None

    def __enter__(self) -> "RowProgress":
        self._progress.__enter__()
        self._task = self._progress.add_task(self.label, total=self.total)
        return self

    def update(self, done: int) -> None:
        self._progress.update(self._task, completed=done)

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)
