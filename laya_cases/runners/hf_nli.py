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

from .. import questions as Q
from . import hf_common as H
from .base import Capabilities, Runner, RunnerInfo, answer_from_probs, softmax

RULE = ("nli zero-shot: premise = state, hypothesis = template(option text); choice/score: softmax over "
        "the options' entailment logits (T=1), argmax / sum i*p_i; noul: P(true) = "
        "softmax([contradiction, entailment] logits of template(statement))[entailment]")


def label_index(id2label: Dict[Any, Any], prefix: str) -> Optional[int]:
    for key, name in (id2label or {}).items():
        if str(name).strip().lower().startswith(prefix):
            return int(key)
    return None


class NLIRunner(Runner):
    name = "hf-nli"
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES,
                                devices=("cpu", "cuda", "mps"), min_confidence=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A local sequence-classification model with an entailment label."""
        cfg = H.config_of(model)
        return (any(str(a).endswith("ForSequenceClassification") for a in cfg.get("architectures") or [])
                and label_index(cfg.get("id2label") or {}, "entail") is not None)

    def __init__(self, model: Optional[str] = None, device: str = "cpu", revision: Optional[str] = None,
                 hypothesis_template: str = "{}", max_length: int = 512, batch_size: int = 64,
                 **options: Any) -> None:
        H.check_options(self.name, options)
        if not model:
            raise ValueError("%s needs a model: a local directory or a hub id in the local cache" % self.name)
        if not str(hypothesis_template).strip() or "{}" not in hypothesis_template:
            raise ValueError("hf-nli: hypothesis_template must contain {} (got %r)" % (hypothesis_template,))
        H.offline()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        local, loaded_revision = H.resolve(model, revision)
        self.tok = AutoTokenizer.from_pretrained(local, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            local, local_files_only=True, dtype=torch.float32).to(device).eval()
        id2label = {int(k): str(v) for k, v in (self.model.config.id2label or {}).items()}
        self.entail = label_index(id2label, "entail")
        self.contra = label_index(id2label, "contradict")
        if self.entail is None:
            raise ValueError("hf-nli: %s config.id2label %s has no entailment label" % (model, id2label))
        self.template = hypothesis_template
        self.device = device
        limit = min(int(max_length), int(getattr(self.tok, "model_max_length", max_length) or max_length),
                    int(getattr(self.model.config, "max_position_embeddings", max_length) or max_length))
        self.max_length, self.batch_size = limit, int(batch_size)
        self.info = RunnerInfo(
            runner=self.name, model_id=model, revision=loaded_revision, device=str(device),
            dtype=H.dtype_name(self.model.dtype), max_length=limit,
            settings={"decision_rule": RULE, "id2label": id2label, "entailment_index": self.entail,
                      "contradiction_index": self.contra, "hypothesis_template": hypothesis_template,
                      "hypothesis_template_sha256": hashlib.sha256(hypothesis_template.encode("utf-8")).hexdigest(),
                      "batch_size": self.batch_size})

    def _logits(self, pairs: List[tuple]) -> List[List[float]]:
        import torch

        out: List[List[float]] = []
        with torch.no_grad():
            for part in H.chunks(pairs, self.batch_size):
                enc = self.tok([a for a, _ in part], [b for _, b in part], padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt").to(self.device)
                out.extend(r.tolist() for r in self.model(**enc).logits.float().cpu())
        return out

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        pairs, spans = [], []
        for state in states:
            premise = H.state_text(state)
            row = {}
            for qid, body in questions.items():
                texts = [H.noul_statement(body)] if body.get("type") == "noul" else Q.option_texts(body)
                row[qid] = (len(pairs), len(pairs) + len(texts))
                pairs.extend((premise, H.fill(self.template, t)) for t in texts)
            spans.append(row)
        logits = self._logits(pairs)
        results = []
        for row in spans:
            answers, facts = {}, {}
            for qid, (lo, hi) in row.items():
                body = questions[qid]
                if body.get("type") == "noul":
                    z = logits[lo]
                    p = (softmax([z[self.contra], z[self.entail]])[1] if self.contra is not None
                         else softmax(z)[self.entail])
                    answers[qid] = answer_from_probs(body, [1.0 - p, p])
                    facts[qid] = {"relevance_score": p}
                else:
                    answers[qid] = answer_from_probs(body, softmax([z[self.entail] for z in logits[lo:hi]]))
            results.append({"answers": answers, "facts": facts})
        return results
