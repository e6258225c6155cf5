"""Recorded answers -> a committed run, exactly as an inference run would write it (issue: ingest).

An answers file is a labelled dataset (S1) whose rows also carry `"answers": {qid: answer}` in the
reference answer shape (S2.4) and optionally `"latency_ms"`. Every row is validated while it is
streamed into the run's staging area; the first bad row aborts with a one-line error naming
file:line and field, and nothing is committed.
"""
from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
from typing import Any, Callable, Dict, Optional

from . import UsageError, __version__
from . import dataset as D
from . import identity as I
from .answers import AnswerError
from .decisions import DecisionBuffer
from .schema import SCHEMA_VERSION
from .warehouse import Warehouse, new_run_id

FLUSH_EVERY = 65536
PROGRESS_EVERY = 512          # rows between progress callbacks (the bar redraws on its own clock)


def _mismatch(row: D.Row, ref: D.Row) -> Optional[str]:
    for key in I.LABELLED_KEYS:
        if (key in row.raw) != (key in ref.raw) or json.dumps(row.raw.get(key), sort_keys=False, default=str) != \
                json.dumps(ref.raw.get(key), sort_keys=False, default=str):
            return key
    return None


def ingest(wh: Warehouse, answers_path: str, *, run_id: Optional[str] = None,
           dataset_path: Optional[str] = None,
           progress: Optional[Callable[[int], None]] = None) -> str:
    run_id = new_run_id() if run_id is None else run_id      # '' is invalid, not 'pick one'
    reference_rows = iter(D.iter_rows(dataset_path)) if dataset_path else None
    dataset_sha = I.file_sha256(dataset_path) if dataset_path else None
    labelled = I.LabelledRowsDigest()
    question_sets = []
    seen_schemas = set()
    buffer = DecisionBuffer()
    n_rows = 0
    with wh.stage(run_id) as staged:
        for row in D.iter_rows(answers_path):
            where = "%s:%d" % (answers_path, row.line_no)
            if reference_rows is not None:
                ref = next(reference_rows, None)
                if ref is None:
                    raise UsageError("%s has more rows than the dataset %s (row %d has no counterpart)"
                                     % (where, dataset_path, row.index))
                field = _mismatch(row, ref)
                if field:
                    raise UsageError("%s does not match dataset row %s:%d: field '%s' differs"
                                     % (where, dataset_path, ref.line_no, field))
            try:
                labelled.add(row.raw)
            except UnicodeEncodeError:
                raise UsageError("%s contains a lone surrogate escape (\\ud800-\\udfff): not valid Unicode text"
                                 % where) from None
            schema_key = json.dumps(row.questions, sort_keys=False, default=str)
            if schema_key not in seen_schemas:            # questions_sha256 needs each distinct set once
                seen_schemas.add(schema_key)
                question_sets.append(row.questions)
            answers = row.raw.get("answers")
            if not isinstance(answers, dict):
                raise UsageError("%s 'answers' must be an object keyed by question id" % where)
            latency = row.raw.get("latency_ms")
            if latency is not None and (isinstance(latency, bool) or not isinstance(latency, (int, float))
                                        or not 0 <= latency <= sys.float_info.max):  # exact, no overflow
                raise UsageError("%s 'latency_ms' must be a finite number >= 0, got %r" % (where, latency))
            call = {"call_id": row.index, "call_ms": None if latency is None else float(latency),
                    "chunk_size": 1, "returned": True}
            model = row.model or None
            if not row.expected:
                buffer.add_empty_row(row, model=model, call=call)
            for pos, (qid, _label) in enumerate(row.expected.items()):
                answer = answers.get(qid)
                if not isinstance(answer, dict):
                    raise UsageError("%s answers['%s']: runner returned no answer for question '%s'"
                                     % (where, qid, qid))
                try:
                    buffer.add_case(row, pos, qid, answer, model=model, call=call)
                except AnswerError as exc:
                    raise UsageError("%s answers['%s'].%s" % (where, qid, exc)) from None
                except UnicodeEncodeError:
                    raise UsageError("%s answers['%s'] contains a lone surrogate escape (\\ud800-\\udfff): "
                                     "not valid Unicode text" % (where, qid)) from None
            n_rows += 1
            if progress and n_rows % PROGRESS_EVERY == 0:
                progress(n_rows)
            if len(buffer) >= FLUSH_EVERY:
                staged.write(buffer.take())
        if reference_rows is not None and next(reference_rows, None) is not None:
            raise UsageError("%s has fewer rows than the dataset %s" % (answers_path, dataset_path))
        staged.write(buffer.take())
        if progress:
            progress(n_rows)
        config: Dict[str, Any] = {"schema": I.REPORT_SCHEMA,
                                  "questions_sha256": I.questions_sha256(question_sets),
                                  "coverage_metric_definition": I.COVERAGE_METRIC_DEFINITION}
        if dataset_path:
            config.update(dataset=dataset_path, dataset_sha256=dataset_sha)
        settings = {"answers": answers_path, "laya_cases_version": __version__,
                    "python": platform.python_version()}
        staged.commit({
            "schema_version": SCHEMA_VERSION,
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "kind": "ingest", "dataset": dataset_path or answers_path,
            "dataset_sha256": dataset_sha, "labelled_rows_sha256": labelled.hexdigest(),
            "questions_sha256": config["questions_sha256"], "model_id": None, "model_revision": None,
            "runner": "recorded", "n_rows": n_rows, "n_cases": buffer.n_cases, "n_errors": buffer.n_errors,
            "config_json": json.dumps(config, sort_keys=True, ensure_ascii=False),
            "settings_json": json.dumps(settings, sort_keys=True, ensure_ascii=False),
        })
    return run_id
