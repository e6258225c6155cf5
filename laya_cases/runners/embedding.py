"""Zero-shot decisions from a sentence embedder: the state against each option's text.

Decision rule (recorded in every run's settings as `decision_rule`, with `temperature`):

* The state is embedded as text by one rule, `state_text` (recorded as `state_rendering:
  "fields/1"`): a string as is; an object of one field as that field's value; an object of several
  fields as `key: value` lines in the object's order; anything else (a list, a number, an empty
  object), and every non-string value, as its compact JSON (separators `,` `:`, raw non-ASCII).
  Embeddings are L2-normalised, so a dot product is a cosine.
* choice and score: z_i = cos(state, option text i), the option texts being the S2.3 renderings
  (`label: description`, `level i: text`); p = softmax(z / T).
* noul: a bare `yes, the statement holds` names no statement, so each of the two S2.3 options is
  embedded after the question's instructions (`<instructions> <false option>`, `... <true option>`);
  P(true) = softmax(z / T)[1], i.e. a logistic in the cosine difference.
* Answers have the reference shape of `base.answer_from_probs` (unrounded, argmax = first maximum),
  built for the whole call at once by `answers_from_matrix` (a test holds the two together).

Option texts are embedded once per process and cached by text, so a question set repeated over a
dataset (or options shared between sets, as in MASSIVE's sampled 20-of-59) costs one forward.
States of a call are embedded in micro-batches of `encode_batch_size`; `sort_by_length` orders
them by character length first so each micro-batch pads to a similar length.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.core import questions as Q
from laya_cases.runners.base import Runner

DEFAULT_TEMPERATURE = 0.05
STATE_RENDERING = "fields/1"
RULE = ("softmax(cos(state, option_i) / T) over L2-normalised embeddings; state text = state_rendering "
        "fields/1 (a string as is; one field: its value; several: `key: value` lines; other values compact "
        "JSON); option texts = S2.3 renderings; noul options are prefixed by the instructions; "
        "choice = argmax, score = sum i*p_i, noul = P(true)")
_CACHE_LIMIT = 200_000


def _value_text(value: Any) -> str:
    """A string as is, anything else its compact JSON (`,` `:`, raw non-ASCII; not the prompts' spaced JSON)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def state_text(state: Any) -> str:
    """The text an embedder reads for a state (rule `fields/1`, STATE_RENDERING; docs/runners.md).

    A string: itself. A non-empty object: one field -> its value's text; several -> one
    `key: value` line per field, in the object's order, joined by LF. Anything else (a list, a
    number, null, an empty object): its compact JSON. A value's text is the string itself, else its
    compact JSON, so nested objects and lists stay on their line.
    """
    if isinstance(state, dict) and state:
        if len(state) == 1:
            return _value_text(next(iter(state.values())))
        return "\n".join("%s: %s" % (key, _value_text(value)) for key, value in state.items())
    return _value_text(state)


embedding_text = state_text       # the name bench/ and older callers import


def option_embed_texts(body: Dict[str, Any]) -> List[str]:
    """The texts each option is embedded as (see the module docstring)."""
    texts = Q.option_texts(body)
    if body.get("type") == "noul":
        prefix = Q.instructions_text(body)
        return ["%s %s" % (prefix, t) for t in texts]
    return texts


def answers_from_matrix(body: Dict[str, Any], probs: np.ndarray, digits: Optional[int] = None) -> List[Dict[str, Any]]:
    """`base.answer_from_probs` for every row of an (n, k) probability matrix, vectorised.

    Same fields, unrounded unless `digits` is given (Python `round` on each value); the entropy
    confidence is summed by numpy, so it may differ from the scalar helper in the last bits.
    """
    kind = body.get("type")
    r = float if digits is None else (lambda x: round(x, digits))
    n, k = probs.shape
    ac = np.clip(probs.max(axis=1), 0.0, 1.0).tolist()
    out: List[Dict[str, Any]] = []
    if kind == "noul":
        for p_true, a in zip(probs[:, 1].tolist(), ac):
            out.append({"type": "noul", "noul": r(p_true),
                        "confidence": r(max(p_true, 1 - p_true)), "answer_confidence": r(a)})
        return out
    if k < 2:
        conf = [1.0] * n
    else:
        h = -(probs * np.log(np.clip(probs, 1e-12, 1.0))).sum(axis=1)
        conf = np.clip(1.0 - h / np.log(k), 0.0, 1.0).tolist()
    values = [[r(x) for x in row] for row in probs.tolist()]
    if kind == "score":
        levels = [str(i) for i in range(k)]
        expected = (probs @ np.arange(k, dtype=np.float64)).tolist()
        legend = list(body.get("criteria") or [])
        for row, e, c, a in zip(values, expected, conf, ac):
            out.append({"type": "score", "score": r(e), "probabilities": dict(zip(levels, row)),
                        "legend": list(legend), "confidence": r(c), "answer_confidence": r(a)})
        return out
    labels = Q.option_labels(body)
    raw = Q.choice_labels(body)
    for row, b, c, a in zip(values, probs.argmax(axis=1).tolist(), conf, ac):
        out.append({"type": "choice", "choice": raw[b], "probabilities": dict(zip(labels, row)),
                    "confidence": r(c), "answer_confidence": r(a)})
    return out


class EmbeddingRunner(Runner):
    """Subclasses implement `_embed(texts) -> (n, d) float32 array of L2-normalised rows`."""

    temperature = DEFAULT_TEMPERATURE
    encode_batch_size = 32

    def __init__(self) -> None:
        self._cache: Dict[str, np.ndarray] = {}

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def _no_options(self, options: Dict[str, Any]) -> None:
        if options:
            raise UsageError("the %s runner takes no option(s) %s" % (self.name, ", ".join(sorted(options))))

    def _no_revision(self, revision: Optional[str], source: str) -> None:
        """`source` says why the model cannot be pinned (it is packaged, or a local file)."""
        if revision:
            raise UsageError("--revision: the %s runner %s and cannot pin a revision" % (self.name, source))

    def _encode(self, texts: Sequence[str], sort_by_length: bool = False) -> np.ndarray:
        order = (sorted(range(len(texts)), key=lambda i: len(texts[i])) if sort_by_length
                 else list(range(len(texts))))
        out = None
        step = max(1, int(self.encode_batch_size))
        for start in range(0, len(order), step):
            idx = order[start:start + step]
            vecs = self._embed([texts[i] for i in idx])
            if out is None:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[idx] = vecs
        return out if out is not None else np.zeros((0, 1), dtype=np.float32)

    def _options(self, texts: List[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            if len(self._cache) + len(missing) > _CACHE_LIMIT:
                self._cache.clear()
            for text, vec in zip(missing, self._encode(missing)):
                self._cache[text] = vec
        return np.stack([self._cache[t] for t in texts])

    def predict_batch(self, states: List[Any], questions: Dict[str, Any],
                      sort_by_length: bool = False) -> List[Dict[str, Any]]:
        plan = []
        for qid, body in questions.items():
            if not isinstance(body, dict) or body.get("type") not in Q.TYPES:
                kind = body.get("type") if isinstance(body, dict) else body
                raise ValueError("question %r: type must be choice, score or noul, got %r" % (qid, kind))
            texts = option_embed_texts(body)
            if not texts:
                raise ValueError("question %r: %s criteria give no options" % (qid, body.get("type")))
            plan.append((qid, body, texts))
        results: List[Dict[str, Any]] = [{"answers": {}, "facts": {}} for _ in states]
        if not plan or not states:
            return results
        state_vecs = self._encode([state_text(s) for s in states], sort_by_length).astype(np.float64)
        t = max(0.001, float(self.temperature))
        for qid, body, texts in plan:
            z = state_vecs @ self._options(texts).astype(np.float64).T / t
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            for result, answer in zip(results, answers_from_matrix(body, p)):
                result["answers"][qid] = answer
                result["facts"][qid] = {"temperature": t}
        return results
