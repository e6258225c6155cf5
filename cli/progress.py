"""A progress line on stderr for long work (rows done, rows/s); silent when stderr is not a terminal."""
from __future__ import annotations

import sys
from typing import Callable, Optional

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.console import Console
from rich.text import Text


class _RateColumn(ProgressColumn):
    """Rows (or the task's `unit`) per second (rich's speed is None until two updates have arrived)."""

    def render(self, task) -> Text:
        unit = task.fields.get("unit", "rows")
        return Text("%8.1f %s/s" % (task.speed, unit) if task.speed is not None else "       ? %s/s" % unit)


def count_rows(path: str) -> Optional[int]:
    """An estimate of a JSON Lines file's rows for the bar's total: non-blank lines not starting with
    `#` (S1.1). None when unreadable: the real reader reports that, with its line number."""
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip() and not line.lstrip().startswith(b"#"))
    except OSError:
        return None


class RowProgress:
    """rows done / total, rows/s, elapsed, ETA on stderr; every call is a no-op off a terminal."""

    def __init__(self, label: str, total: Optional[int] = None, waiting: Optional[str] = None,
                 enabled: bool = True):
        self.label, self.total = label, total
        self.waiting = waiting                   # shown until set_total (e.g. while a model loads)
        self.enabled = enabled and sys.stderr.isatty()
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  _RateColumn(), TimeElapsedColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                                  disable=not self.enabled)
        self._task = None

    def __enter__(self) -> "RowProgress":
        self._progress.__enter__()
        label = self.label if self.waiting is None else "%s (%s)" % (self.label, self.waiting)
        self._task = self._progress.add_task(label, total=self.total)
        return self

    def set_total(self, total: int) -> None:
        """The total, once known (a run knows it after loading the dataset)."""
        self._progress.update(self._task, total=total, description=self.label)

    def update(self, done: int) -> None:
        self._progress.update(self._task, completed=done)

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)


class StepProgress:
    """Bars on stderr for the long steps of a report (bootstrap replicates, cases written to JSON);
    `step(label, unit)` gives the progress(done, total) callback laya_cases calls. Nothing is drawn
    off a terminal, and each bar goes away when the report is done."""

    def __init__(self, quiet: bool = False) -> None:
        self.enabled = sys.stderr.isatty() and not quiet
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  _RateColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                  console=Console(stderr=True), transient=True, disable=not self.enabled,
                                  redirect_stdout=False, redirect_stderr=False)

    def __enter__(self) -> "StepProgress":
        self._progress.__enter__()
        return self

    def step(self, label: str, unit: str) -> Optional[Callable[[int, int], None]]:
        if not self.enabled:
            return None
        task = []

        def update(done: int, total: int) -> None:
            if not task:
                task.append(self._progress.add_task(label, total=total, unit=unit))
            self._progress.update(task[0], completed=done, total=total)
        return update

    def phases(self, label: str, after: float = 0.5) -> Optional[Callable[[int, int, str], None]]:
        """A bar over the metric pipeline's tables, named by the SQL file being computed ("report:
        pipeline/level_cells.sql"), shown only once the step has taken `after` seconds, so a quick
        report draws nothing; the phase(done, total, path) callback laya_cases calls."""
        if not self.enabled:
            return None
        import threading

        task = self._progress.add_task(label, total=None, visible=False, unit="tables")
        self._timer = threading.Timer(after, lambda: self._progress.update(task, visible=True))
        self._timer.daemon = True
        self._timer.start()

        def phase(done: int, total: int, path: str) -> None:
            self._progress.update(task, completed=done, total=total, description="%s: %s" % (label, path))
        return phase

    def __exit__(self, *exc) -> None:
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()
        self._progress.__exit__(*exc)
