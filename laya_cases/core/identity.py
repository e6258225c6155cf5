"""Run identity: what a run measured (spec S5).

`dataset_sha256` is the file's raw bytes (S5.1); `questions_sha256` is the question schema, row
independent (S5.2). Without a dataset file (recorded answers ingested on their own) the dataset
identity is `labelled_rows_sha256`: a digest of the labelled rows with their answers removed,
documented in docs/identity.md, so two answer files over the same dataset still compare.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Iterable, Optional, Tuple

from laya_cases.core.errors import UsageError

REPORT_SCHEMA = "laya-evals-report/1"
COVERAGE_METRIC_DEFINITION = 2
#: The keys of a dataset row that define what was asked and what is right (not what was answered).
LABELLED_KEYS = ("state", "questions", "expected", "language", "tags", "model")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise UsageError("%s cannot be read for a fingerprint: %s" % (path, exc)) from None
    return digest.hexdigest()


def _instructions_text(body: Dict[str, Any]) -> str:
    ins = body.get("instructions")
    return ins if isinstance(ins, str) else json.dumps(ins, ensure_ascii=False)


def questions_sha256(question_sets: Iterable[Dict[str, Any]]) -> str:
    """S5.2: the set of canonical per-question lines, sorted, each fed with a trailing LF."""
    lines = set()
    for questions in question_sets:
        for qid, body in questions.items():
            body = body if isinstance(body, dict) else {}
            canon = {"qid": qid, "type": body.get("type"), "instructions": _instructions_text(body),
                     "labels": body.get("labels"), "criteria": body.get("criteria")}
            if "option_order" in body:
                canon["option_order"] = body["option_order"]
            lines.add(_compact(canon))
    digest = hashlib.sha256()
    for line in sorted(lines):
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def labelled_line(row: Dict[str, Any]) -> str:
    """A row's labelled content (LABELLED_KEYS present in it, in that order) as compact JSON."""
    return _compact({key: row[key] for key in LABELLED_KEYS if key in row})


class LabelledRowsDigest:
    """Streaming digest of labelled rows: one compact JSON line per row of LABELLED_KEYS, in order.

    Keys absent from a row are absent from its line; inner key order is kept as written (S1.1), so
    the digest changes when the labelled content or the row order changes, not when answers do.
    """

    def __init__(self) -> None:
        self._digest = hashlib.sha256(b"laya-cases-labelled-rows/1\n")

    def add(self, row: Dict[str, Any]) -> str:
        """Fold one row in; returns its line (without the LF): the text the store keeps as the row's
        input (store/inputs.py), so the inputs file of a digest holds exactly what the digest hashed."""
        line = labelled_line(row)
        self._digest.update(line.encode("utf-8") + b"\n")
        return line

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


_MISSING = "<absent>"


def first_difference(stored: Any, now: Any, path: str = "") -> Optional[Tuple[str, Any, Any]]:
    """(dotted key, recorded value, current value) of the first difference, keys in sorted order."""
    if isinstance(stored, dict) and isinstance(now, dict):
        for key in sorted(set(stored) | set(now)):
            found = first_difference(stored.get(key, _MISSING), now.get(key, _MISSING),
                                     "%s.%s" % (path, key) if path else key)
            if found:
                return found
        return None
    return None if stored == now else (path or "the run", stored, now)
