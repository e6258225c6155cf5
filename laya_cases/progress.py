"""A progress line on stderr for long work (rows done, rows/s); silent when stderr is not a terminal."""
from __future__ import annotations

import sys
from typing import Optional

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.console import Console
from rich.text import Text


class _RateColumn(ProgressColumn):
    """Rows per second (rich's speed is None until two updates have arrived)."""

    def render(self, task) -> Text:
        return Text("%8.1f rows/s" % task.speed if task.speed is not None else "       ? rows/s")


class RowProgress:
    def __init__(self, label: str, total: Optional[int] = None):
        self.label, self.total = label, total
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  _RateColumn(), TimeElapsedColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                                  disable=not sys.stderr.isatty())
        self._task = None

    def __enter__(self) -> "RowProgress":
        self._progress.__enter__()
        self._task = self._progress.add_task(self.label, total=self.total)
        return self

    def set_total(self, total: int) -> None:
        """The total, once known (a run knows it after loading the dataset)."""
        self._progress.update(self._task, total=total)

    def update(self, done: int) -> None:
        self._progress.update(self._task, completed=done)

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)
