"""Turning (dataset row, answers, call facts) into decision rows (the Arrow schema in schema.py).

Everything per case that the reference computes per answer (S2.7-S2.9, S3.4-S3.8) is computed
here once and stored; all aggregation happens in SQL over the stored columns.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Dict, List, Optional

import pyarrow as pa

from . import answers as A
from . import questions as Q
from .dataset import Row, slice_key
from .schema import DECISION_SCHEMA


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def _num(value: Any) -> Optional[float]:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:                         # an int beyond binary64
        return math.inf if value > 0 else -math.inf


def _utf8(text: str) -> str:
    """Raise UnicodeEncodeError now (a lone surrogate escape), not later in Arrow without a row."""
    text.encode("utf-8")
    return text


class DecisionBuffer:
    """Accumulates decision rows column-wise and hands them out as Arrow record batches."""

    def __init__(self) -> None:
        self._cols: Dict[str, List[Any]] = {f.name: [] for f in DECISION_SCHEMA}
        self._seen: Dict[str, int] = {}
        self._slice_sets: Dict[tuple, int] = {}
        self.n_cases = 0
        self.n_errors = 0

    def __len__(self) -> int:
        return len(self._cols["row_index"])

    def _case_id(self, row: Row, qid: str) -> str:
        body = row.questions.get(qid)
        digest = hashlib.blake2b(_json([row.state, qid, body]).encode("utf-8"), digest_size=10).hexdigest()
        n = self._seen.get(digest, 0) + 1
        self._seen[digest] = n
        return digest if n == 1 else "%s#%d" % (digest, n)

    def _append(self, values: Dict[str, Any]) -> None:
        combo = (values.get("language_key"), values.get("model_key"), values.get("qid"),
                 tuple(values.get("tags") or ()), values.get("answer_type"), values.get("correct"))
        values["slice_set"] = self._slice_sets.setdefault(combo, len(self._slice_sets))
        for name, column in self._cols.items():
            column.append(values.get(name))

    def _row_facts(self, row: Row, model: Any, call: Dict[str, Any]) -> Dict[str, Any]:
        return {
            "row_index": row.index, "line_no": row.line_no,
            "language": None if row.language is None else _json(row.language),
            "language_key": slice_key(row.language),
            "model": None if model is None else _json(model),
            "model_key": slice_key(model),
            "tags": list(row.tags),
            "call_id": call.get("call_id"), "call_ms": call.get("call_ms"),
            "chunk_size": call.get("chunk_size"), "call_returned": call.get("returned", True),
        }

    def add_case(self, row: Row, qid_pos: int, qid: str, answer: Dict[str, Any], *,
                 model: Any = None, call: Optional[Dict[str, Any]] = None,
                 extra: Optional[Dict[str, Any]] = None) -> None:
        """One case. Raises answers.AnswerError when a field cannot be read."""
        label = row.expected[qid]
        body = row.questions.get(qid)
        body = body if isinstance(body, dict) else {}
        options = Q.option_labels(body)
        conf, source = A.confidence(answer)
        correct = A.correct(answer, label)
        kind = answer.get("type")
        probs = answer.get("probabilities")
        by_label = {str(k): _num(v) for k, v in probs.items()} if isinstance(probs, dict) else {}
        values = self._row_facts(row, model, call or {})
        values.update({
            "case_id": self._case_id(row, qid), "qid": qid, "qid_pos": qid_pos,
            "question_type": None if body.get("type") is None else str(body.get("type")),
            "instructions": Q.instructions_text(body),
            "options": options, "option_texts": Q.option_texts(body),
            "expected_json": _json(label), "expected_kind": A.expected_kind(label),
            "answer_type": None if kind is None else str(kind),
            "answer_json": _utf8(_json(answer)), "predicted": A.predicted(answer),
            "probabilities": [by_label.get(o) for o in options] if by_label else None,
            "noul_p": _num(answer.get("noul")), "score_value": _num(answer.get("score")),
            "answer_confidence": _num(answer.get("answer_confidence")),
            "confidence_field": _num(answer.get("confidence")),
            "confidence": conf, "confidence_source": source,
            "gate_confidence": A.gate_confidence(answer),
            "correct": correct,
            "choice_accuracy": (None if kind != "choice" or correct is None else float(correct)),
            "noul_accuracy": (None if kind != "noul" or correct is None else float(correct)),
            "score_mae": A.score_error(answer, label),
            "abstention": answer.get("abstention") if isinstance(answer.get("abstention"), str) else None,
            "temperature_bucket": (Q.bucket(str(kind), len(options)) if kind in Q.TYPES and options else None),
        })
        if extra:
            values.update(extra)
        self._append(values)
        self.n_cases += 1

    def add_error(self, row: Row, error: str, *, qid: Optional[str] = None, qid_pos: Optional[int] = None,
                  model: Any = None, call: Optional[Dict[str, Any]] = None) -> None:
        """An errored record (S6.10): a failed call (every row of its chunk) or a missing answer."""
        values = self._row_facts(row, model, call or {})
        values.update({"qid": qid, "qid_pos": qid_pos, "error": error,
                       "case_id": None if qid is None else self._case_id(row, qid)})
        self._append(values)
        self.n_errors += 1

    def add_empty_row(self, row: Row, *, model: Any = None, call: Optional[Dict[str, Any]] = None) -> None:
        """A row whose `expected` is empty: no case, but its call still counts in the timing (S3.15)."""
        self._append(self._row_facts(row, model, call or {}))

    def take(self) -> pa.RecordBatch:
        """Everything buffered so far, as one record batch; the buffer is emptied."""
        batch = pa.RecordBatch.from_pydict(self._cols, schema=DECISION_SCHEMA)
        for column in self._cols.values():
            column.clear()
        return batch
