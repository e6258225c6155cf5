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

from laya_cases.core import answers as A
from laya_cases.core import questions
from laya_cases.core.dataset import Row, slice_key
from laya_cases.store.schema import DECISION_SCHEMA


#: json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str), without building an encoder
#: per call (json.dumps does when given any option; a few JSON texts per case).
_json = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), default=str).encode


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


def _aligned(probs: Any, options: List[str]) -> Optional[List[Optional[float]]]:
    """The answer's {label: p} as a list in option order (null where absent); None without any."""
    if not isinstance(probs, dict) or not probs:
        return None
    if not all(type(k) is str for k in probs):
        probs = {str(k): v for k, v in probs.items()}
    return [v if type(v) is float else _num(v) for v in map(probs.get, options)]


def body_facts(raw_body: Any) -> tuple:
    """(options, option_texts, instructions, question_type) of one question body."""
    body = raw_body if isinstance(raw_body, dict) else {}
    return (questions.option_labels(body), questions.option_texts(body), questions.instructions_text(body),
            None if body.get("type") is None else str(body.get("type")))


def case_digest(row: Row, qid: str, body_json: Optional[str] = None, state_json: Optional[str] = None) -> str:
    """blake2b-80 of `<state JSON> NUL <qid> NUL <question body JSON>` (before repeat numbering)."""
    if body_json is None:
        body_json = _json(row.questions.get(qid))
    key = "%s\x00%s\x00%s" % (_json(row.state) if state_json is None else state_json, qid, body_json)
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


class DecisionBuffer:
    """Accumulates decision rows (a dict each) and hands them out as Arrow record batches."""

    def __init__(self) -> None:
        self._rows: List[Dict[str, Any]] = []   # one dict a decision row (Arrow builds the columns in C++)
        self._seen: Dict[str, int] = {}
        self._slice_sets: Dict[tuple, int] = {}
        self._bodies: Dict[str, tuple] = {}      # body JSON -> its rendered facts (rows repeat questions)
        self._state_of: Optional[Row] = None     # the last row whose state JSON is _state_text
        self._state_text = ""
        self.n_cases = 0
        self.n_errors = 0

    def __len__(self) -> int:
        return len(self._rows)

    def _case_id(self, row: Row, qid: str, body_json: Optional[str] = None) -> str:
        return self._number(case_digest(row, qid, body_json, self._state_json(row)))

    def _state_json(self, row: Row) -> str:
        """The row's state as JSON, written once for all its cases (the row object is the key)."""
        if self._state_of is not row:
            self._state_of, self._state_text = row, _json(row.state)
        return self._state_text

    def _number(self, digest: str) -> str:
        """The n-th case with this digest in the run is `<digest>#<n>` (the first is the bare digest)."""
        n = self._seen.get(digest, 0) + 1
        self._seen[digest] = n
        return digest if n == 1 else "%s#%d" % (digest, n)

    def continue_from(self, case_ids: List[Optional[str]], slice_sets: Dict[tuple, int], n_cases: int,
                      n_errors: int) -> None:
        """Number on after committed rows (a resumed run or shard): their case ids' repeats (`<digest>#<n>`;
        a derived id `<parent>/<kind>` numbers nothing), their slice sets and the counts."""
        for case_id in case_ids:
            if case_id is not None and "/" not in case_id:
                digest = case_id.split("#", 1)[0]
                self._seen[digest] = self._seen.get(digest, 0) + 1
        self._slice_sets.update(slice_sets)
        self.n_cases, self.n_errors = n_cases, n_errors

    def _append(self, values: Dict[str, Any]) -> None:
        combo = (values.get("language_key"), values.get("model_key"), values.get("qid"),
                 tuple(values.get("tags") or ()), values.get("answer_type"), values.get("correct"))
        values["slice_set"] = self._slice_set(combo)
        self._rows.append(values)

    def _slice_set(self, combo: tuple) -> Optional[int]:
        return self._slice_sets.setdefault(combo, len(self._slice_sets))

    def _row_facts(self, row: Row, model: Any, call: Dict[str, Any]) -> Dict[str, Any]:
        return {
            "row_index": row.index, "line_no": row.line_no,
            "language": None if row.language is None else _json(row.language),
            "language_key": slice_key(row.language),
            "model": None if model is None else _json(model),
            "model_key": slice_key(model),
            "tags": list(row.tags),
            "item_id": slice_key(row.raw.get("item_id")),     # str() of the row's item_id, like a slice key
            "source_item_id": slice_key(row.raw.get("source_item_id")),
            "call_id": call.get("call_id"), "call_ms": call.get("call_ms"),
            "chunk_size": call.get("chunk_size"), "call_returned": call.get("returned", True),
        }

    def add_case(self, row: Row, qid_pos: int, qid: str, answer: Dict[str, Any], *,
                 model: Any = None, call: Optional[Dict[str, Any]] = None,
                 extra: Optional[Dict[str, Any]] = None) -> None:
        """One case. Raises answers.AnswerError when a field cannot be read."""
        label = row.expected[qid]
        raw_body = row.questions.get(qid)
        body_json = _json(raw_body)
        facts = self._bodies.get(body_json)
        if facts is None:                        # render each distinct question body once
            facts = body_facts(raw_body)
            if len(self._bodies) > 4096:
                self._bodies.clear()
            self._bodies[body_json] = facts
        options, option_texts, instructions, question_type = facts
        conf, source = A.confidence(answer)
        correct = A.correct(answer, label)
        kind = answer.get("type")
        values = self._row_facts(row, model, call or {})
        values.update({
            "case_id": self._case_id(row, qid, body_json), "qid": qid, "qid_pos": qid_pos,
            "question_type": question_type, "instructions": instructions,
            "options": list(options), "option_texts": list(option_texts),
            "expected_json": _json(label), "expected_kind": A.expected_kind(label),
            "answer_type": None if kind is None else str(kind),
            "answer_json": _utf8(_json(answer)), "predicted": A.predicted(answer),
            "probabilities": _aligned(answer.get("probabilities"), options),
            "noul_p": _num(answer.get("noul")), "score_value": _num(answer.get("score")),
            "answer_confidence": _num(answer.get("answer_confidence")),
            "confidence_field": _num(answer.get("confidence")),
            "confidence": conf, "confidence_source": source,
            "gate_confidence": A.gate_confidence(answer),
            "correct": correct,
            "score_mae": A.score_error(answer, label),
            "abstention": answer.get("abstention") if isinstance(answer.get("abstention"), str) else None,
            "temperature_bucket": (questions.bucket(str(kind), len(options))
                                   if kind in questions.TYPES and options else None),
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
        batch = pa.RecordBatch.from_pylist(self._rows, schema=DECISION_SCHEMA)
        self._rows = []
        return batch
