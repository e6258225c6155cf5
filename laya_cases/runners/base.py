"""The runner protocol: predict a batch of states on one question set -> answers in the reference shape.

A runner answers `predict_batch(states, questions)` with one result per state:
`{"answers": {qid: answer}}` where each answer has the reference shape (S2.4): choice ->
`type, choice, probabilities {label: p}, confidence, answer_confidence`; score -> `type, score,
probabilities {"0": p, ...}, legend, confidence, answer_confidence`; noul -> `type, noul,
confidence, answer_confidence`. Extra per-decision facts (raw logits, temperature, raw generated text,
parsed flag, relevance score) go under `result["facts"][qid]` and land in the decision row's columns.

Capabilities are data (style practice 6): the `run` command checks them and refuses a request the
runner cannot honour (exit 2, naming the field) before any call.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core import questions as Q


@dataclass(frozen=True)
class Capabilities:
    probabilities: bool = True          # answers carry per-option probabilities
    batching: bool = True               # predict_batch shares one forward pass across states
    question_types: Sequence[str] = ("choice", "score", "noul")
    devices: Sequence[str] = ("cpu",)
    min_confidence: bool = True         # the abstention gate can be applied to its answers (S6.11)
    per_row_model: bool = False         # can answer a row that names its own `model`
    sort_by_length: bool = False        # predict_batch(..., sort_by_length=True) regroups work by length


@dataclass
class RunnerInfo:
    """What the run records about the model actually loaded (S5, S6.13)."""

    runner: str
    model_id: str
    revision: Optional[str] = None
    device: str = "cpu"
    dtype: Optional[str] = None
    max_length: Optional[int] = None
    settings: Dict[str, Any] = field(default_factory=dict)   # decision rule, temperatures, prompt sha256...


class Runner:
    """Base class; subclasses implement `predict_batch` and set `name`, `capabilities` and `info`.

    Construction (registry.load): `cls(model=..., device=..., revision=..., batch_size=...)`, where
    only the options the user gave are passed and `model` only when `--model` was not the runner's
    registered name. Refuse what cannot be honoured by raising UsageError (or ValueError); the run
    exits 2 before any row. Keep heavy imports (torch, transformers) inside `__init__`: the
    registry imports every runner class to ask `accepts`.
    """

    name: str = ""
    capabilities = Capabilities()
    info: RunnerInfo

    @classmethod
    def accepts(cls, model: str) -> bool:
        """Whether `--model <model>` that is not a registered name is one this runner loads."""
        return False

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        """One result per state, in order. The run adds `sort_by_length=True` only when
        `capabilities.sort_by_length`, and `model=<row model>` only when `capabilities.per_row_model`."""
        raise NotImplementedError


# ---------------------------------------------------------------------------- shared answer math
def softmax(logits: Sequence[float], temperature: float = 1.0) -> List[float]:
    """softmax(z / max(0.001, T)) with max-subtraction (S7.4)."""
    t = max(0.001, float(temperature))
    z = [x / t for x in logits]
    top = max(z)
    e = [math.exp(x - top) for x in z]
    s = sum(e)
    return [x / s for x in e]


def _entropy_confidence(p: Sequence[float]) -> float:
    """S2.5 normalised-entropy confidence (what the reference puts in `confidence` for choice/score)."""
    k = len(p)
    if k < 2:
        return 1.0
    h = -sum(x * math.log(min(1.0, max(1e-12, x))) for x in p)
    return min(1.0, max(0.0, 1.0 - h / math.log(k)))


def answer_from_probs(body: Dict[str, Any], probs: Sequence[float], digits: Optional[int] = None) -> Dict[str, Any]:
    """Build the reference-shaped answer for one question from per-option probabilities (S2.4).

    Values are what the model computed (S7.7: stored unrounded; rounding can move an ECE bin or a tie
    at a coverage cut), unless `digits` asks for rounding; the argmax is the first maximum.
    """
    kind = body.get("type")
    labels = Q.option_labels(body)
    best = max(range(len(probs)), key=lambda i: probs[i])
    ac = min(1.0, max(0.0, max(probs))) if probs else 1.0
    r = (lambda x: float(x)) if digits is None else (lambda x: round(float(x), digits))
    if kind == "noul":
        p_true = float(probs[1])
        return {"type": "noul", "noul": r(p_true), "confidence": r(max(p_true, 1 - p_true)),
                "answer_confidence": r(ac)}
    if kind == "score":
        return {"type": "score", "score": r(sum(i * p for i, p in enumerate(probs))),
                "probabilities": {str(i): r(p) for i, p in enumerate(probs)},
                "legend": list(body.get("criteria") or []),
                "confidence": r(_entropy_confidence(probs)), "answer_confidence": r(ac)}
    raw_labels = Q.choice_labels(body)
    return {"type": "choice", "choice": raw_labels[best] if raw_labels else None,
            "probabilities": {str(l): r(p) for l, p in zip(labels, probs)},
            "confidence": r(_entropy_confidence(probs)), "answer_confidence": r(ac)}
