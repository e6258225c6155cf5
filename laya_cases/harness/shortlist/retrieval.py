"""Retrieval and elimination, model-free (S7.17, S7.18, S7.20).

`rank` keeps the top k labels of a choice question by signed cosine between the state and each
option's S2.3 text, ties keeping the earlier label (a stable sort on the negated cosine), exactly
as the reference's `laya.shortlist._rank`: the query text is the instructions, a newline, then the
state (a string as is, else its JSON with `, `/`: ` separators and raw non-ASCII); a non-finite
embedding value counts as 0. When k >= n the question passes through: the embedder is not
called, the labels stay in criteria order and the scores are None.

`groups` cuts a label list, in order, into ceil(n/g) near-equal groups (the reference's
`labels[i*n//parts:(i+1)*n//parts]`); winners advance until at most g remain.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import questions as Q

Embed = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Ranked:
    labels: List[str]                 # kept labels, rank order (criteria order on pass-through)
    scores: Optional[List[float]]     # signed cosine per kept label; None on pass-through
    k: int
    n: int
    passthrough: bool


def check_k(k: Any, flag: str = "--k") -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError("%s must be an integer >= 1, got %r" % (flag, k))
    return k


def check_group_size(g: Any) -> int:
    if isinstance(g, bool) or not isinstance(g, int) or g < 2:
        raise UsageError("--group-size must be an integer >= 2, got %r" % (g,))
    return g


def labels_of(body: Dict[str, Any]) -> List[Any]:
    criteria = body.get("criteria")
    return list(criteria) if isinstance(criteria, (dict, list)) else []


def query_text(state: Any, instructions: Any) -> str:
    text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
    if instructions is None or instructions == "":
        return text
    if not isinstance(instructions, str):
        instructions = json.dumps(instructions, ensure_ascii=False)
    return "%s\n%s" % (instructions, text)


def _cosine(query: np.ndarray, docs: np.ndarray) -> np.ndarray:
    sims = np.zeros(docs.shape[0], dtype=np.float64)
    qn = float(np.linalg.norm(query))
    if qn == 0.0 or docs.shape[0] == 0:
        return sims
    denom = np.linalg.norm(docs, axis=1) * qn
    ok = denom > 0.0
    if np.any(ok):
        sims[ok] = np.clip(np.dot(docs[ok], query) / denom[ok], -1.0, 1.0)
    return sims


def rank(state: Any, body: Dict[str, Any], embed: Embed, k: int) -> Ranked:
    """S7.18 for one choice question."""
    labels = labels_of(body)
    n = len(labels)
    if k >= n:
        return Ranked(list(labels), None, k, n, True)
    texts = [query_text(state, body.get("instructions"))] + Q.option_texts({"type": "choice",
                                                                           "criteria": body["criteria"]})
    raw = embed(texts)
    matrix = np.nan_to_num(np.asarray(raw, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] < 1:
        raise ValueError("embedder returned shape %s for %d texts" % (tuple(matrix.shape), len(texts)))
    sims = _cosine(matrix[0], matrix[1:])
    order = np.argsort(-sims, kind="mergesort")[:k]
    return Ranked([labels[int(i)] for i in order], [float(sims[int(i)]) for i in order], k, n, False)


def narrowed(body: Dict[str, Any], labels: Sequence[Any]) -> Dict[str, Any]:
    """The question with only `labels`, in that order; an option_order no longer fits and is dropped."""
    criteria = body["criteria"]
    out = dict(body, criteria=({label: criteria[label] for label in labels} if isinstance(criteria, dict)
                               else list(labels)))
    out.pop("option_order", None)
    return out


def groups(labels: Sequence[Any], g: int) -> List[List[Any]]:
    """One elimination round's groups (S7.20); a single group when len(labels) <= g."""
    n = len(labels)
    parts = max(1, -(-n // g))
    return [list(labels[i * n // parts:(i + 1) * n // parts]) for i in range(parts)]


def status(expected: Any, kept: Sequence[Any], correct: Optional[bool], tournament: bool) -> str:
    """S7.19 / S7.20: the stage that lost the case, or `correct`."""
    if expected not in kept:
        return "elimination_miss" if tournament else "retrieval_miss"
    if correct:
        return "correct"
    return "final_choice_miss" if tournament else "decision_miss"


def check_rows(path: str, rows: Sequence[Any]) -> None:
    """S7.17: every expected qid a choice with unique string labels and a string gold among them."""
    if not rows:
        raise UsageError("%s contains no examples" % path)
    for row in rows:
        if not row.expected:
            raise UsageError("%s:%d row %d: expected must contain a choice label" % (path, row.line_no, row.index))
        for qid, gold in row.expected.items():
            where = "%s:%d row %d question '%s'" % (path, row.line_no, row.index, shorten(str(qid)))
            body = row.questions.get(qid)
            if not isinstance(body, dict) or body.get("type") != "choice":
                raise UsageError("%s: shortlist evaluation requires a choice question" % where)
            labels = labels_of(body)
            if not labels or any(not isinstance(l, str) for l in labels) or len(set(labels)) != len(labels):
                raise UsageError("%s: criteria must be an object or list of unique string labels" % where)
            if not isinstance(gold, str) or gold not in labels:
                raise UsageError("%s: expected label %s is not in criteria" % (where, shorten(repr(gold))))
