"""Several committed runs of one dataset, checked once for every command that lines them up case by case
(rank, stability, audit): how many, none named twice, and the same labelled rows and questions."""
from __future__ import annotations

from typing import Dict, Sequence

from laya_cases.core.errors import UsageError

MAX_RUNS = 20


def check(wh, run_ids: Sequence[str], command: str, max_runs: int = MAX_RUNS) -> Dict[str, dict]:
    """Each run's runs-table row, after the checks; a UsageError names the first problem."""
    named(run_ids, command, max_runs)
    return same_dataset(wh, run_ids, command)


def named(run_ids: Sequence[str], command: str, max_runs: int = MAX_RUNS) -> None:
    """2 to max_runs runs, none twice (checked before anything is read)."""
    if len(run_ids) < 2 or len(run_ids) > max_runs:
        raise UsageError("%s needs 2 to %d runs, got %d" % (command, max_runs, len(run_ids)))
    twice = sorted({r for r in run_ids if list(run_ids).count(r) > 1})
    if twice:
        raise UsageError("run %s is named twice" % twice[0])


def same_dataset(wh, run_ids: Sequence[str], command: str) -> Dict[str, dict]:
    """The labelled rows and the questions, not the file's bytes: an ingest without --dataset has no
    dataset_sha256, and the same rows in another file are the same cases (S5.2)."""
    rows = {rid: wh.run_row(wh.require_run(rid)) for rid in run_ids}
    first = run_ids[0]
    for rid in run_ids[1:]:
        for key, what in (("labelled_rows_sha256", "labelled rows"), ("questions_sha256", "questions")):
            if rows[rid][key] != rows[first][key]:
                raise UsageError("%s compares runs of one dataset: run %s has %s %s, run %s has %s"
                                 % (command, first, what, str(rows[first][key])[:8], rid, str(rows[rid][key])[:8]))
    return rows
