"""One run being recorded, for `run` and `ingest` alike: identity (S5), decision rows, staging, commit.

A recorder folds every labelled row into the run's identity (the labelled-rows digest and the
distinct question sets behind `questions_sha256`), turns answered rows into decision rows through
one DecisionBuffer (which also numbers the slice sets), streams them into the warehouse's staging
area in bounded batches, and writes the run row last. Nothing is visible before `commit`; an
exception anywhere inside `staging()` discards the staging area.
"""
from __future__ import annotations

import datetime as _dt
import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Optional

from . import UsageError, __version__
from . import identity
from .answers import AnswerError
from .jsontext import NOT_UNICODE
from .dataset import Row
from .decisions import DecisionBuffer
from .schema import SCHEMA_VERSION
from .warehouse import Warehouse

FLUSH_EVERY = 65536          # decision rows held in memory before they go to the staging area


@dataclass(frozen=True)
class RecordedRun:
    """A committed run, as its run row counts it."""

    run_id: str
    n_rows: int
    n_cases: int
    n_errors: int


class RunRecorder:
    """Records one run whose rows come from `source` (the file named in every error's file:line)."""

    def __init__(self, wh: Warehouse, run_id: str, source: str):
        self.wh, self.run_id, self.source = wh, run_id, source
        self.buffer = DecisionBuffer()
        self.n_rows = 0
        self._labelled = identity.LabelledRowsDigest()
        self._question_sets: Dict[str, Dict[str, Any]] = {}
        self._staged: Any = None            # the warehouse's staged run while staging() is open

    def where(self, row: Row) -> str:
        return "%s:%d" % (self.source, row.line_no)

    def note_row(self, row: Row) -> None:
        """Fold one labelled row into the run identity (S5.2 needs each distinct question set once)."""
        try:
            self._labelled.add(row.raw)
        except UnicodeEncodeError:    # JSON "\ud800" parses, but cannot be stored as UTF-8
            raise UsageError("%s %s" % (self.where(row), NOT_UNICODE)) from None
        self._question_sets.setdefault(json.dumps(row.questions, sort_keys=False, default=str), row.questions)
        self.n_rows += 1

    @contextmanager
    def staging(self) -> Iterator["RunRecorder"]:
        """The staging area the decision rows stream into; `commit` inside it makes the run visible."""
        with self.wh.stage(self.run_id) as staged:
            self._staged = staged
            try:
                yield self
            finally:
                self._staged = None

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

    def commit(self, *, kind: str, dataset: str, dataset_sha256: Optional[str], runner: str,
               config: Dict[str, Any], settings: Dict[str, Any], model_id: Optional[str] = None,
               model_revision: Optional[str] = None) -> RecordedRun:
        """Write what is buffered and the run row (S5 identity added to `config`); the run is visible."""
        self._staged.write(self.buffer.take())
        questions_sha = identity.questions_sha256(self._question_sets.values())
        config = dict({"schema": identity.REPORT_SCHEMA}, **config)        # a harness may name its own schema
        config.update(questions_sha256=questions_sha, coverage_metric_definition=identity.COVERAGE_METRIC_DEFINITION)
        settings = dict(settings, laya_cases_version=__version__)
        self._staged.commit({
            "schema_version": SCHEMA_VERSION,
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "kind": kind, "dataset": dataset, "dataset_sha256": dataset_sha256,
            "labelled_rows_sha256": self._labelled.hexdigest(), "questions_sha256": questions_sha,
            "model_id": model_id, "model_revision": model_revision, "runner": runner,
            "n_rows": self.n_rows, "n_cases": self.buffer.n_cases, "n_errors": self.buffer.n_errors,
            "config_json": json.dumps(config, sort_keys=True, ensure_ascii=False),
            "settings_json": json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str),
        })
        return RecordedRun(self.run_id, self.n_rows, self.buffer.n_cases, self.buffer.n_errors)
