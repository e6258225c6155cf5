"""A cross-encoder (AutoModelForSequenceClassification) as a runner.

Each (state, option text) pair gets a relevance score: the single logit of a one-label model, or
logit[1] - logit[0] (the log-odds of label 1, "relevant") of a two-label model. choice and score:
softmax of the option scores (temperature 1) -> probabilities, argmax / expected level (S2.4).
noul: one pair (state, statement) and P(true) = sigmoid(score), P(relevant) of the statement;
it is also stored as the decision's `relevance_score`. Option texts are the S2.3 renderings.
"""
from __future__ import annotations

from typing import Any, List, Optional

from laya_cases.runners import hf_common as H
from laya_cases.runners.hf_base import PairClassifierRunner

RULE = ("cross-encoder: score(state, option text) = logit (1 label) or logit[1] - logit[0] (2 labels); "
        "choice/score: softmax over option scores (T=1), argmax / sum i*p_i; noul: P(true) = "
        "sigmoid(score(state, instructions [+ true criterion]))")


class CrossEncoderRunner(PairClassifierRunner):
    name = "hf-cross-encoder"

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A local sequence-classification model with one or two labels (NLI models go to hf-nli)."""
        cfg = cls.classifier_config(model)
        labels = [str(v).lower() for v in ((cfg or {}).get("id2label") or {}).values()]
        return cfg is not None and not any(l.startswith("entail") for l in labels) and len(labels) <= 2

    def __init__(self, model: Optional[str] = None, device: str = "cpu", revision: Optional[str] = None,
                 max_length: int = 512, batch_size: int = 64, **options: Any) -> None:
        self._check(model, options)
        loaded_revision = self._load(model, device, revision, max_length, batch_size)
        n = int(self.model.config.num_labels)
        if n not in (1, 2):
            raise ValueError("hf-cross-encoder: %s has %d labels; a relevance model has 1 or 2 "
                             "(use hf-nli for an NLI model)" % (model, n))
        self.n_labels = n
        self._record(model, loaded_revision, self.model, self.max_length,
                     {"decision_rule": RULE, "num_labels": n, "batch_size": self.batch_size})

    def _reduce(self, logits: Any) -> List[float]:
        col = logits[:, 0] if self.n_labels == 1 else logits[:, 1] - logits[:, 0]
        return [float(x) for x in col]

    def _option_score(self, value: float) -> float:
        return value

    def _p_true(self, value: float) -> float:
        return H.sigmoid(value)
