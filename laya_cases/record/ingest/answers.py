"""Recorded answers -> a committed run, exactly as an inference run would write it (issue: ingest).

An answers file is a labelled dataset (S1) whose rows also carry `"answers": {qid: answer}` in the
reference answer shape (S2.4) and optionally `"latency_ms"`. Every row is validated while it is
streamed into the run's staging area (record/recorder.py); the first bad row aborts with a one-line error
naming file:line and field, and nothing is committed.
"""
from __future__ import annotations

import json
import os
import platform
import sys
from typing import Any, Callable, Dict, Iterator, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import dataset as D
from laya_cases.core import identity as I
from laya_cases.interop import pandas_probe
from laya_cases.record.ingest.bulk import BulkIngest, Fallback
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import new_run_id

PROGRESS_EVERY = 512          # rows between progress callbacks (the bar redraws on its own clock)


def _mismatch(row: D.Row, ref: D.Row) -> Optional[str]:
    for key in I.LABELLED_KEYS:
        if (key in row.raw) != (key in ref.raw) or json.dumps(row.raw.get(key), sort_keys=False, default=str) != \
                json.dumps(ref.raw.get(key), sort_keys=False, default=str):
            return key
    return None


def _check_pairing(where: str, row: D.Row, ref: Optional[D.Row], dataset_path: str) -> None:
    """--dataset: the answers row must repeat its dataset row's labelled keys exactly."""
    if ref is None:
        raise UsageError("%s has more rows than the dataset %s (row %d has no counterpart)"
                         % (where, dataset_path, row.index))
    field = _mismatch(row, ref)
    if field:
        raise UsageError("%s does not match dataset row %s:%d: field '%s' differs"
                         % (where, dataset_path, ref.line_no, field))


def record_answers_row(recorder: RunRecorder, row: D.Row) -> None:
    """One answers row: its `answers` object and `latency_ms` checked, its decision rows buffered."""
    where = recorder.where(row)
    answers = row.raw.get("answers")
    if not isinstance(answers, dict):
        raise UsageError("%s 'answers' must be an object keyed by question id" % where)
    latency = row.raw.get("latency_ms")
    if latency is not None and (isinstance(latency, bool) or not isinstance(latency, (int, float))
                                or not 0 <= latency <= sys.float_info.max):  # exact, no overflow
        raise UsageError("%s 'latency_ms' must be a finite number >= 0, got %s" % (where, shorten(repr(latency))))
    call = {"call_id": row.index, "call_ms": None if latency is None else float(latency),
            "chunk_size": 1, "returned": True}

    def missing(_pos: int, qid: str) -> None:            # recorded answers: say what is wrong with them
        if qid not in answers:
            raise UsageError("%s answers['%s']: no answer for question '%s' (the row answers: %s)"
                             % (where, qid, qid, shorten(", ".join(map(repr, answers)) or "nothing")))
        raise UsageError("%s answers['%s'] must be an answer object such as {\"type\": \"choice\", "
                         "\"choice\": \"refund\"}, got %s" % (where, qid, shorten(repr(answers[qid]))))

    recorder.add_answers(row, answers, model=row.model or None, call=call, field="answers", missing=missing)


#: Answers files from this size on are read column-wise by default (about 2,000 lines of answers).
BULK_MIN_BYTES = 1 << 20


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0                        # the per-row path reports an unreadable file, naming it


def ingest(wh: Warehouse, answers_path: str, *, run_id: Optional[str] = None,
           dataset_path: Optional[str] = None,
           progress: Optional[Callable[[int], None]] = None, bulk: Optional[bool] = None) -> RecordedRun:
    """Commit the answers file as a run of kind `ingest`; `--dataset` pins its rows and bytes.

    Without `--dataset`, canonical lines are read column-wise (record/ingest/bulk.py) when `bulk` is True, or
    (None) when the file has BULK_MIN_BYTES or more: the column-wise path costs a fixed ~80 ms to set
    up, which a small file does not win back. The stored rows are the same either way
    (tests/record/test_ingest_bulk.py compares them cell by cell)."""
    pandas_probe.skip()                      # ~0.3 s of CPU pyarrow would spend importing pandas
    run_id = new_run_id() if run_id is None else run_id
    if bulk is None:
        bulk = _size(answers_path) >= BULK_MIN_BYTES
    if dataset_path is None and bulk:
        recorder = RunRecorder(wh, run_id, answers_path)
        try:
            with recorder.staging():
                BulkIngest(recorder, answers_path, record_answers_row).run(progress)
                return recorder.commit(kind="ingest", dataset=answers_path, dataset_sha256=None,
                                       runner="recorded", config={},
                                       settings={"answers": answers_path, "python": platform.python_version()})
        except Fallback:
            pass                           # read again from the first line by the per-row path
    recorder = RunRecorder(wh, run_id, answers_path)  # '' is invalid
    reference_rows: Optional[Iterator[D.Row]] = iter(D.iter_rows(dataset_path)) if dataset_path else None
    dataset_sha = I.file_sha256(dataset_path) if dataset_path else None
    with recorder.staging():
        for row in D.iter_rows(answers_path):
            if reference_rows is not None:
                _check_pairing(recorder.where(row), row, next(reference_rows, None), dataset_path)
            recorder.note_row(row)
            record_answers_row(recorder, row)
            if progress and recorder.n_rows % PROGRESS_EVERY == 0:
                progress(recorder.n_rows)
            recorder.flush()
        if reference_rows is not None and next(reference_rows, None) is not None:
            raise UsageError("%s has fewer rows than the dataset %s" % (answers_path, dataset_path))
        if progress:
            progress(recorder.n_rows)
        config: Dict[str, Any] = {"dataset": dataset_path, "dataset_sha256": dataset_sha} if dataset_path else {}
        return recorder.commit(kind="ingest", dataset=dataset_path or answers_path, dataset_sha256=dataset_sha,
                               runner="recorded", config=config,
                               settings={"answers": answers_path, "python": platform.python_version()})
