"""Reading one answer against its label, exactly as the reference does (S2.7-S2.9, S3.4-S3.8).

These are per-case facts written into each decision row at ingest/run time; every aggregate over
them is SQL in sql/. An answer field the reference would crash on is a usage error here, naming the
field: a `noul` that is not a JSON number or boolean (the reference compares it, so even "0.7" fails),
a `score` or probability that `float()` cannot read (the reference reads those with `float()`, so a
numeric string is read as its number). A non-numeric `answer_confidence`/`confidence` is skipped (S2.7).
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple


class AnswerError(ValueError):
    """An answer field has a type the metrics cannot read; the message names the field."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(value: Any, field: str) -> float:
    try:
        return float(value)
    except OverflowError:
        raise AnswerError("%s is too large for a binary64 number" % field) from None
    except (TypeError, ValueError):
        raise AnswerError("%s must be a number, got %s" % (field, type(value).__name__)) from None


def _noul(answer: Dict[str, Any]) -> float:
    """A noul answer's P(true), missing 0.0 (S2.7, S2.9). The reference compares it (`noul >= 0.5`), so
    it must be a JSON number or boolean: a string, even "0.7", crashes the reference and is refused here,
    for every noul answer, whatever its label."""
    value = answer.get("noul", 0.0)
    if not isinstance(value, (int, float)):
        raise AnswerError("noul must be a number, got %s" % type(value).__name__)
    return _float(value, "noul")


def confidence(answer: Dict[str, Any]) -> Tuple[Optional[float], Optional[str]]:
    """S2.7: (the confidence the metrics read, which link supplied it)."""
    for key in ("answer_confidence", "confidence"):
        value = answer.get(key)
        if _is_number(value):
            return _float(value, key), key
    if answer.get("type") == "noul":
        p = _noul(answer)
        return max(p, 1.0 - p), "noul"
    probabilities = answer.get("probabilities")
    if isinstance(probabilities, dict) and probabilities:
        return max(_float(v, "probabilities[%r]" % k) for k, v in probabilities.items()), "probabilities"
    return None, None


def gate_confidence(answer: Dict[str, Any]) -> Optional[float]:
    """S2.8: a finite answer_confidence, else a finite confidence, else none."""
    for key in ("answer_confidence", "confidence"):
        value = answer.get(key)
        if _is_number(value) and math.isfinite(_float(value, key)):    # a huge int: AnswerError
            return float(value)
    return None


def expected_kind(label: Any) -> str:
    if label is None:
        return "null"
    if isinstance(label, bool):
        return "bool"
    if isinstance(label, str):
        return "string"
    if isinstance(label, (int, float)):
        return "number"
    return "other"


def _noul_true(answer: Dict[str, Any]) -> bool:
    return _noul(answer) >= 0.5


def correct(answer: Dict[str, Any], label: Any) -> Optional[bool]:
    """S2.9: dispatch on the answer's own type; null when unscored."""
    kind = answer.get("type")
    if kind == "choice" and isinstance(label, str):
        return answer.get("choice") == label
    if kind == "noul" and isinstance(label, bool):
        return _noul_true(answer) == label
    return None


def score_error(answer: Dict[str, Any], label: Any) -> Optional[float]:
    """S3.6: |score - label| for a score answer with a numeric, non-boolean label (missing score 0.0)."""
    if answer.get("type") != "score" or not _is_number(label):
        return None
    return abs(_float(answer.get("score", 0.0), "score") - _float(label, "expected"))


def predicted(answer: Dict[str, Any]) -> Optional[str]:
    """The predicted value as text: the choice label, true/false for noul (>= 0.5), or the score."""
    kind = answer.get("type")
    if kind == "choice":
        value = answer.get("choice")
        return None if value is None else str(value)
    if kind == "noul":
        return "true" if _noul_true(answer) else "false"
    if kind == "score" and _is_number(answer.get("score")):
        try:
            return repr(float(answer["score"]))
        except OverflowError:                     # an int beyond binary64: keep its digits
            return str(answer["score"])
    return None


def score_within_key(tolerance: float) -> str:
    """S3.7: `score_within_` + the tolerance in C %g form."""
    return "score_within_%g" % tolerance
