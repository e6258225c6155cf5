"""`validate --strict` (S9.6): every finding, not just the first, each naming path:line, qid and field.

The default `validate` stays reference-identical (S1.4). Strict adds the label conventions the
reference does not enforce (S1.3), label membership and range, and the question-body checks the
reference runner applies at answer time (S2.2). Errors make the exit 2; warnings do not.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core.dataset import Row

KNOWN_ROW_KEYS = {"state", "questions", "expected", "tags", "language", "model", "id", "item_id", "source_item_id",
                  "comment"}
_LABEL_TYPES = (str, int, float, bool)


@dataclass
class Finding:
    where: str          # path:line
    field: str          # e.g. expected['spam'] or questions['intent'].criteria
    message: str
    error: bool = True

    def __str__(self) -> str:
        return "%s %s: %s" % (self.where, self.field, self.message)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean %s" % ("true" if value else "false")
    if isinstance(value, str):
        return "string %s" % shorten(repr(value))
    if isinstance(value, (int, float)):
        return "number %s" % shorten(repr(value))
    return type(value).__name__ if not isinstance(value, (list, dict)) else ("list" if isinstance(value, list) else "object")


def body_findings(where: str, qid: str, body: Any) -> List[Finding]:
    """S2.2 checks on one question body."""
    f = "questions['%s']" % qid
    if not isinstance(body, dict):
        return [Finding(where, f, "question must be an object, got %s" % _kind(body))]
    out: List[Finding] = []
    kind = body.get("type")
    if kind not in ("choice", "score", "noul"):
        return [Finding(where, f + ".type", "type must be choice, score or noul, got %s" % _kind(kind))]
    ins = body.get("instructions")
    if ins is None or ins == "" or (isinstance(ins, str) and not ins.strip()):
        out.append(Finding(where, f + ".instructions", "instructions must be present and not empty"))
    criteria = body.get("criteria")
    n_options = None
    if kind == "choice":
        labels = list(criteria) if isinstance(criteria, dict) else criteria if isinstance(criteria, list) else None
        if not labels:
            out.append(Finding(where, f + ".criteria", "choice criteria must be a non-empty object or list of labels"))
        else:
            seen: List[Any] = []
            for label in labels:
                if label is None or not isinstance(label, _LABEL_TYPES):
                    out.append(Finding(where, f + ".criteria", "choice label must be a string, number or boolean, "
                                       "got %s" % _kind(label)))
                elif label in seen:                       # Python equality: 1 == 1.0 == True, "1" != 1
                    out.append(Finding(where, f + ".criteria", "duplicate choice label %s (1, 1.0 and true count as one)"
                                       % shorten(repr(label))))
                seen.append(label)
            n_options = len(labels)
    elif kind == "score":
        if not isinstance(criteria, list) or not criteria:
            out.append(Finding(where, f + ".criteria", "score criteria must be a non-empty list of level texts"))
        else:
            if any(level is None for level in criteria):
                out.append(Finding(where, f + ".criteria", "score levels must not be null"))
            n_options = len(criteria)
    else:
        if criteria is not None and (not isinstance(criteria, dict) or set(criteria) - {"true", "false"}):
            out.append(Finding(where, f + ".criteria", "noul criteria must be an object keyed only 'true'/'false'"))
        n_options = 2
    labels_field = body.get("labels")
    if "labels" in body:
        if kind != "noul":
            out.append(Finding(where, f + ".labels", "labels are only allowed on a noul question"))
        elif (not isinstance(labels_field, dict) or set(labels_field) != {"false", "true"}
              or not all(isinstance(v, str) and v.strip() for v in labels_field.values())
              or labels_field["false"].strip() == labels_field["true"].strip()):
            out.append(Finding(where, f + ".labels", "labels must map exactly 'false' and 'true' to distinct "
                                                     "non-empty strings"))
    if "option_order" in body and n_options is not None:
        order = body["option_order"]
        if (not isinstance(order, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in order)
                or sorted(order) != list(range(n_options))):
            out.append(Finding(where, f + ".option_order", "option_order must be a permutation of 0..%d"
                               % (n_options - 1)))
    return out


def label_findings(where: str, qid: str, body: Any, label: Any) -> List[Finding]:
    """S1.3 label conventions plus membership (choice) and range (score)."""
    if not isinstance(body, dict):
        return []
    f = "expected['%s']" % qid
    kind = body.get("type")
    if kind == "choice":
        if not isinstance(label, str):
            return [Finding(where, f, "choice label must be a string, got %s" % _kind(label))]
        criteria = body.get("criteria")
        labels = list(criteria) if isinstance(criteria, (dict, list)) else []
        if label not in [l for l in labels if isinstance(l, str)]:
            return [Finding(where, f, "choice label %s is not one of the options: %s"
                            % (shorten(repr(label)), shorten(", ".join(str(l) for l in labels), 200)))]
    elif kind == "noul":
        if not isinstance(label, bool):
            return [Finding(where, f, "noul label must be true or false, got %s" % _kind(label))]
    elif kind == "score":
        if isinstance(label, bool) or not isinstance(label, (int, float)):
            return [Finding(where, f, "score label must be a number, got %s" % _kind(label))]
        k = len(body.get("criteria")) if isinstance(body.get("criteria"), list) else 0
        if (isinstance(label, float) and not math.isfinite(label)) or not 0 <= label <= k - 1:   # an int is finite, however large
            return [Finding(where, f, "score label must be a finite level in [0, %d], got %s"
                            % (max(k - 1, 0), shorten(repr(label))))]
    return []


def row_findings(path: str, row: Row) -> List[Finding]:
    where = "%s:%d" % (path, row.line_no)
    out: List[Finding] = []
    for qid, body in row.questions.items():
        out += body_findings(where, qid, body)
    for qid, label in row.expected.items():
        out += label_findings(where, qid, row.questions.get(qid), label)
    for key in ("language", "model"):
        if key in row.raw and row.raw[key] is not None and not isinstance(row.raw[key], str):
            out.append(Finding(where, key, "%s should be a string, got %s" % (key, _kind(row.raw[key])), error=False))
    tags = row.raw.get("tags") or []
    for i, tag in enumerate(tags):
        if not isinstance(tag, str):
            out.append(Finding(where, "tags[%d]" % i, "tag should be a string, got %s (sliced as %r)"
                               % (_kind(tag), shorten(str(tag))), error=False))
    for key in sorted(set(row.raw) - KNOWN_ROW_KEYS):
        out.append(Finding(where, key, "unknown row key (ignored)", error=False))
    if not row.expected:
        out.append(Finding(where, "expected", "empty: this row yields no cases", error=False))
    return out


def refuse_errors(path: str, rows: List[Row]) -> None:
    """Before a model loads (`run`): the first strict error is the usage error; warnings pass."""
    for row in rows:
        for finding in row_findings(path, row):
            if finding.error:
                raise UsageError(str(finding))
