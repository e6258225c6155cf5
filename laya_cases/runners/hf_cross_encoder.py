"""A cross-encoder (AutoModelForSequenceClassification) as a runner.

Each (state, option text) pair gets a relevance score: the single logit of a one-label model, or
logit[1] - logit[0] (the log-odds of label 1, "relevant") of a two-label model. choice and score:
softmax of the option scores (temperature 1) -> probabilities, argmax / expected level (S2.4).
noul: one pair (state, statement) and P(true) = sigmoid(score), P(relevant) of the statement;
it is also stored as the decision's `relevance_score`. Option texts are the S2.3 renderings.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .. import questions as Q
from . import hf_common as H
from .base import Capabilities, Runner, RunnerInfo, answer_from_probs, softmax

RULE = ("cross-encoder: score(state, option text) = logit (1 label) or logit[1] - logit[0] (2 labels); "
        "choice/score: softmax over option scores (T=1), argmax / sum i*p_i; noul: P(true) = "
        "sigmoid(score(state, instructions [+ true criterion]))")


class CrossEncoderRunner(Runner):
    name = "hf-cross-encoder"
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES,
                                devices=("cpu", "cuda", "mps"), min_confidence=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A local sequence-classification model with one or two labels (NLI models go to hf-nli)."""
        cfg = H.config_of(model)
        archs = [str(a) for a in cfg.get("architectures") or []]
        labels = [str(v).lower() for v in (cfg.get("id2label") or {}).values()]
        return (any(a.endswith("ForSequenceClassification") for a in archs)
                and not any(l.startswith("entail") for l in labels) and len(labels) <= 2)

    def __init__(self, model: Optional[str] = None, device: str = "cpu", revision: Optional[str] = None,
                 max_length: int = 512, batch_size: int = 64, **options: Any) -> None:
        H.check_options(self.name, options)
        if not model:
            raise ValueError("%s needs a model: a local directory or a hub id in the local cache" % self.name)
        H.offline()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        local, loaded_revision = H.resolve(model, revision)
        self.tok = AutoTokenizer.from_pretrained(local, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            local, local_files_only=True, dtype=torch.float32).to(device).eval()
        n = int(self.model.config.num_labels)
        if n not in (1, 2):
            raise ValueError("hf-cross-encoder: %s has %d labels; a relevance model has 1 or 2 "
                             "(use hf-nli for an NLI model)" % (model, n))
        self.n_labels = n
        self.device = device
        limit = min(int(max_length), int(getattr(self.tok, "model_max_length", max_length) or max_length),
                    int(getattr(self.model.config, "max_position_embeddings", max_length) or max_length))
        self.max_length, self.batch_size = limit, int(batch_size)
        self.info = RunnerInfo(runner=self.name, model_id=model, revision=loaded_revision, device=str(device),
                               dtype=H.dtype_name(self.model.dtype), max_length=limit,
                               settings={"decision_rule": RULE, "num_labels": n, "batch_size": self.batch_size})

    def _scores(self, pairs: List[tuple]) -> List[float]:
        import torch

        out: List[float] = []
        with torch.no_grad():
            for part in H.chunks(pairs, self.batch_size):
                enc = self.tok([a for a, _ in part], [b for _, b in part], padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt").to(self.device)
                logits = self.model(**enc).logits.float().cpu()
                col = logits[:, 0] if self.n_labels == 1 else logits[:, 1] - logits[:, 0]
                out.extend(float(x) for x in col)
        return out

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        pairs, spans = [], []                       # spans[(i, qid)] = slice of `pairs`
        for state in states:
            text = H.state_text(state)
            row = {}
            for qid, body in questions.items():
                texts = [H.noul_statement(body)] if body.get("type") == "noul" else Q.option_texts(body)
                row[qid] = (len(pairs), len(pairs) + len(texts))
                pairs.extend((text, t) for t in texts)
            spans.append(row)
        scores = self._scores(pairs)
        results = []
        for row in spans:
            answers, facts = {}, {}
            for qid, (lo, hi) in row.items():
                body = questions[qid]
                if body.get("type") == "noul":
                    p = H.sigmoid(scores[lo])
                    answers[qid] = answer_from_probs(body, [1.0 - p, p])
                    facts[qid] = {"relevance_score": p}
                else:
                    answers[qid] = answer_from_probs(body, softmax(scores[lo:hi]))
            results.append({"answers": answers, "facts": facts})
        return results
