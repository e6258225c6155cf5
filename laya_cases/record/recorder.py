"""One run being recorded, for `run` and `ingest` alike: identity (S5), decision rows, staging, commit.

A recorder folds every labelled row into the run's identity (the labelled-rows digest and the
distinct question sets behind `questions_sha256`), turns answered rows into decision rows through
one DecisionBuffer (which also numbers the slice sets), streams them into the warehouse's staging
area in bounded batches, and writes the run row last. Nothing is visible before `commit`; an
exception anywhere inside `staging()` discards the staging area.

Chunked commits (`laya-cases run`; store/progress.py): with `commit_rows` and/or `commit_seconds`, the
caller asks `chunk_due(rows_done)` after each runner call and, when due, `commit_chunk(...)` makes the
decisions so far visible as an incomplete run; `commit` then finishes it. `staging(resume=True)` takes
over an incomplete run instead: the decision buffer continues its case-id repeat counts, slice-set ids
and case/error counts, so the rows still to come are recorded exactly as in an uninterrupted run.
"""
from __future__ import annotations

import datetime as _dt
import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.core.version import __version__
from laya_cases.core import identity
from laya_cases.core.answers import AnswerError
from laya_cases.core.jsontext import NOT_UNICODE
from laya_cases.core.dataset import Row
from laya_cases.record.decisions import DecisionBuffer
from laya_cases.store import schema as store_schema
from laya_cases.store.schema import SCHEMA_VERSION
from laya_cases.store.warehouse import Warehouse

FLUSH_EVERY = 65536          # decision rows held in memory before they go to the staging area
COMMIT_ROWS = 65536          # `laya-cases run`: dataset rows between chunk commits (--commit-every)
COMMIT_SECONDS = 300.0       # `laya-cases run`: seconds between chunk commits (--commit-seconds)


@dataclass(frozen=True)
class RecordedRun:
    """A committed run, as its run row counts it."""

    run_id: str
    n_rows: int
    n_cases: int
    n_errors: int


class RunRecorder:
    """Records one run whose rows come from `source` (the file named in every error's file:line).

    `commit_rows` / `commit_seconds` (None or 0: never) make `chunk_due` true once that many dataset
    rows or seconds have passed since the last chunk commit; without either the run commits once."""

    def __init__(self, wh: Warehouse, run_id: str, source: str, *, commit_rows: Optional[int] = None,
                 commit_seconds: Optional[float] = None):
        self.wh, self.run_id, self.source = wh, run_id, source
        self.buffer = DecisionBuffer()
        self.n_rows = 0
        self._labelled = identity.LabelledRowsDigest()
        self._inputs: List[Any] = []        # (row_index, line) per noted row, or Arrow arrays (the bulk path)
        self._question_sets: Dict[str, Dict[str, Any]] = {}
        self._staged: Any = None            # the warehouse's staged run while staging() is open
        self.commit_rows, self.commit_seconds = commit_rows or None, commit_seconds or None
        self.resumed: Optional[Dict[str, Any]] = None     # the progress entry staging(resume=True) took over
        self._last_rows, self._last_time = 0, time.monotonic()

    def where(self, row: Row) -> str:
        return "%s:%d" % (self.source, row.line_no)

    def note_row(self, row: Row) -> None:
        """Fold one labelled row into the run identity (S5.2 needs each distinct question set once)."""
        try:
            self._inputs.append((row.index, self._labelled.add(row.raw)))
        except UnicodeEncodeError:    # JSON "\ud800" parses, but cannot be stored as UTF-8
            raise UsageError("%s %s" % (self.where(row), NOT_UNICODE)) from None
        self._question_sets.setdefault(json.dumps(row.questions, sort_keys=False, default=str), row.questions)
        self.n_rows += 1

    def note_inputs(self, row_index: Any, lines: Any) -> None:
        """The inputs of rows the bulk ingest path folded into the digest itself (Arrow arrays: row
        indices and their labelled lines, core/identity.labelled_line)."""
        self._inputs.append((row_index, lines))

    def inputs(self) -> Any:
        """The noted rows as a schema.INPUT_SCHEMA table (the store keeps it once per digest)."""
        import numpy as np
        import pyarrow as pa

        index: List[Any] = []
        lines: List[Any] = []
        pending_index: List[int] = []
        pending_lines: List[str] = []
        for first, second in self._inputs:
            if isinstance(first, int):
                pending_index.append(first)
                pending_lines.append(second)
                continue
            if pending_index:
                index.append(pa.array(pending_index, pa.int64()))
                lines.append(pa.array(pending_lines, pa.string()))
                pending_index, pending_lines = [], []
            index.append(first.cast(pa.int64()))
            lines.append(second.cast(pa.string()))
        if pending_index:
            index.append(pa.array(pending_index, pa.int64()))
            lines.append(pa.array(pending_lines, pa.string()))
        n = sum(len(a) for a in index)
        digest = pa.array([self._labelled.hexdigest()], pa.string()).take(pa.array(np.zeros(n, dtype=np.int32)))
        table = pa.table([digest, pa.chunked_array(index, pa.int64()), pa.chunked_array(lines, pa.string())],
                         schema=store_schema.INPUT_SCHEMA)
        order = table.column("row_index").to_numpy()
        return table if (np.diff(order) > 0).all() else table.sort_by("row_index")   # noted in order: no copy

    def identity(self) -> Dict[str, str]:
        """The run's identity over the rows noted so far: labelled_rows_sha256 and questions_sha256."""
        return {"labelled_rows_sha256": self._labelled.hexdigest(),
                "questions_sha256": identity.questions_sha256(self._question_sets.values())}

    @contextmanager
    def staging(self, resume: bool = False) -> Iterator["RunRecorder"]:
        """The staging area the decision rows stream into; `commit` inside it makes the run visible.
        With `resume`, take over the incomplete run of this id (`self.resumed` is its progress entry)."""
        with self.wh.stage(self.run_id, resume=resume) as staged:
            self._staged = staged
            try:
                if resume:
                    self._restore(staged)
                yield self
            finally:
                self._staged = None

    def _restore(self, staged: Any) -> None:
        """Continue the committed chunks' numbering: case-id repeats, slice-set ids, case/error counts."""
        entry = staged.progress
        sets: Dict[tuple, int] = {}
        for s in self.wh.committed_slice_sets(self.run_id):
            sets[(s["language_key"], s["model_key"], s["qid"], tuple(s["tags"] or ()), s["answer_type"],
                  s["correct"])] = s["slice_set"]
        if sorted(sets.values()) != list(range(len(sets))):
            raise UsageError("cannot resume run %r: its slice sets are not numbered 0..%d" % (self.run_id, len(sets) - 1))
        self.buffer.continue_from(self.wh.committed_cases(self.run_id, ["case_id"])["case_id"], sets,
                                  entry["run"]["n_cases"], entry["run"]["n_errors"])
        staged._seen_sets = set(sets.values())                   # noqa: SLF001
        self.resumed = entry
        self._last_rows = entry["rows_committed"]

    def flush(self) -> None:
        """Hand the buffered decision rows to staging once there are enough of them."""
        if len(self.buffer) >= FLUSH_EVERY:
            self._staged.write(self.buffer.take())

    def add_answers(self, row: Row, answers: Dict[str, Any], *, model: Any, call: Dict[str, Any], field: str,
                    missing: Callable[[int, str], None],
                    extra: Optional[Callable[[str], Dict[str, Any]]] = None) -> None:
        """The decision rows of one answered row: a case per expected qid, or one empty row.

        `missing(qid_pos, qid)` handles a qid without an answer object; an answer field that cannot
        be read is a usage error naming `<file>:<line> <field>['<qid>']` and the field.
        """
        if not row.expected:
            self.buffer.add_empty_row(row, model=model, call=call)
        for pos, qid in enumerate(row.expected):
            answer = answers.get(qid)
            if not isinstance(answer, dict):
                missing(pos, qid)
                continue
            try:
                self.buffer.add_case(row, pos, qid, answer, model=model, call=call,
                                     extra=extra(qid) if extra else None)
            except AnswerError as exc:
                raise UsageError("%s %s['%s'].%s" % (self.where(row), field, qid, exc)) from None
            except UnicodeEncodeError:
                raise UsageError("%s %s['%s'] %s" % (self.where(row), field, qid, NOT_UNICODE)) from None

    def chunk_due(self, rows_done: int) -> bool:
        """Whether a chunk commit is due after `rows_done` dataset rows (a runner-call boundary)."""
        if self.commit_rows is not None and rows_done - self._last_rows >= self.commit_rows:
            return True
        return self.commit_seconds is not None and time.monotonic() - self._last_time >= self.commit_seconds

    def commit_chunk(self, rows_done: int, resume: Dict[str, Any], **run: Any) -> None:
        """Make the decisions so far visible as an incomplete run that has `rows_done` dataset rows
        committed; `resume` is the identity a resuming writer must match; `run` as for `commit`."""
        self._staged.write(self.buffer.take())
        self._staged.commit_chunk(self._run_row(**run), rows_done, resume)
        self._last_rows, self._last_time = rows_done, time.monotonic()

    def commit(self, **run: Any) -> RecordedRun:
        """Write what is buffered and the run row (S5 identity added to `config`); the run is visible.
        Keywords: kind, dataset, dataset_sha256, runner, config, settings, model_id, model_revision."""
        self._staged.write(self.buffer.take())
        self._staged.commit(self._run_row(**run), inputs=self.inputs)      # built only for a new digest
        return RecordedRun(self.run_id, self.n_rows, self.buffer.n_cases, self.buffer.n_errors)

    def _run_row(self, *, kind: str, dataset: str, dataset_sha256: Optional[str], runner: str,
                 config: Dict[str, Any], settings: Dict[str, Any], model_id: Optional[str] = None,
                 model_revision: Optional[str] = None) -> Dict[str, Any]:
        questions_sha = identity.questions_sha256(self._question_sets.values())
        config = dict({"schema": identity.REPORT_SCHEMA}, **config)        # a harness may name its own schema
        config.update(questions_sha256=questions_sha, coverage_metric_definition=identity.COVERAGE_METRIC_DEFINITION)
        settings = dict(settings, laya_cases_version=__version__)
        return {
            "schema_version": SCHEMA_VERSION,
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "kind": kind, "dataset": dataset, "dataset_sha256": dataset_sha256,
            "labelled_rows_sha256": self._labelled.hexdigest(), "questions_sha256": questions_sha,
            "model_id": model_id, "model_revision": model_revision, "runner": runner,
            "n_rows": self.n_rows, "n_cases": self.buffer.n_cases, "n_errors": self.buffer.n_errors,
            "config_json": json.dumps(config, sort_keys=True, ensure_ascii=False),
            "settings_json": json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str),
        }
