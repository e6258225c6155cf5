"""Zero-shot classification with an NLI model (premise = state, one hypothesis per option).

The label indices come from the model's `config.id2label`: the entailment label is the one whose
name starts with `entail`, contradiction `contradict` (case-insensitive); a model without an
entailment label is refused. choice and score: the entailment logit of each option's hypothesis,
softmax over the options (T=1), as transformers' single-label zero-shot pipeline does. noul: one
hypothesis (the statement) and P(true) = softmax([contradiction, entailment])[1], the pipeline's
multi-label rule (softmax over all labels -> P(entailment) when the model has no contradiction
label); stored as `relevance_score` too. A hypothesis is `hypothesis_template` with its first `{}`
replaced by the option text (S2.3 rendering) or the statement; the default template is `{}`.
"""
from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Optional

from laya_cases.runners import hf_common as H
from laya_cases.runners.base import softmax
from laya_cases.runners.hf_base import PairClassifierRunner

RULE = ("nli zero-shot: premise = state, hypothesis = template(option text); choice/score: softmax over "
        "the options' entailment logits (T=1), argmax / sum i*p_i; noul: P(true) = "
        "softmax([contradiction, entailment] logits of template(statement))[entailment]")


def label_index(id2label: Dict[Any, Any], prefix: str) -> Optional[int]:
    for key, name in (id2label or {}).items():
        if str(name).strip().lower().startswith(prefix):
            return int(key)
    return None


class NLIRunner(PairClassifierRunner):
    name = "hf-nli"

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A local sequence-classification model with an entailment label."""
        cfg = cls.classifier_config(model)
        return cfg is not None and label_index(cfg.get("id2label") or {}, "entail") is not None

    def __init__(self, model: Optional[str] = None, device: str = "cpu", revision: Optional[str] = None,
                 hypothesis_template: str = "{}", max_length: int = 512, batch_size: int = 64,
                 **options: Any) -> None:
        self._check(model, options)
        if not str(hypothesis_template).strip() or "{}" not in hypothesis_template:
            raise ValueError("hf-nli: hypothesis_template must contain {} (got %r)" % (hypothesis_template,))
        loaded_revision = self._load(model, device, revision, max_length, batch_size)
        id2label = {int(k): str(v) for k, v in (self.model.config.id2label or {}).items()}
        self.entail = label_index(id2label, "entail")
        self.contra = label_index(id2label, "contradict")
        if self.entail is None:
            raise ValueError("hf-nli: %s config.id2label %s has no entailment label" % (model, id2label))
        self.template = hypothesis_template
        self._record(model, loaded_revision, self.model, self.max_length, {
            "decision_rule": RULE, "id2label": id2label, "entailment_index": self.entail,
            "contradiction_index": self.contra, "hypothesis_template": hypothesis_template,
            "hypothesis_template_sha256": hashlib.sha256(hypothesis_template.encode("utf-8")).hexdigest(),
            "batch_size": self.batch_size})

    def _hypothesis(self, text: str) -> str:
        return H.fill(self.template, text)

    def _reduce(self, logits: Any) -> List[List[float]]:
        return [r.tolist() for r in logits]

    def _option_score(self, value: List[float]) -> float:
        return value[self.entail]

    def _p_true(self, z: List[float]) -> float:
        return softmax([z[self.contra], z[self.entail]])[1] if self.contra is not None else softmax(z)[self.entail]
