"""`minilm-relevance`: the packaged all-MiniLM-L6-v2 as a relevance *scoring* model (S8.5).

A relevance state is an object with a `question` and a `sentence` (laya_cases.harness.relevance writes them);
both are embedded (mean pooling, L2-normalised, as the `minilm` runner does) and their cosine c is the
native score. The normalised yes score is (c + 1) / 2, clipped to [0, 1]; the no score is 1 - yes.
The original verdict is the argmax of the two, a tie going to no (yes > no, i.e. c > 0). The noul
answer carries P(true) = yes. Every decision's facts: relevance_score (yes), no_score, native_score (c).
A state that is a string, or lacks either field, is an error (the run's --on-error decides).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from laya_cases.runners.base import Capabilities, answer_from_probs
from laya_cases.runners.minilm import MiniLMRunner

RULE = ("relevance scoring: c = cos(embed(question), embed(sentence)) over mean-pooled, L2-normalised "
        "all-MiniLM-L6-v2 embeddings; yes = clip((c + 1) / 2, 0, 1), no = 1 - yes, native = c; "
        "original verdict = argmax(yes, no), a tie goes to no; noul = yes")


class MiniLMRelevanceRunner(MiniLMRunner):
    name = "minilm-relevance"
    capabilities = Capabilities(question_types=("noul",), devices=("cpu", "cuda"), sort_by_length=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return False                      # chosen by name only (`laya-cases relevance run --model minilm`)

    def __init__(self, model: Optional[str] = None, device: Optional[str] = None,
                 revision: Optional[str] = None, batch_size: Optional[int] = None, **options: Any) -> None:
        super().__init__(model=model, device=device, revision=revision, batch_size=batch_size, **options)
        self.info.runner = self.name
        self.info.settings = dict(self.info.settings, decision_rule=RULE, yes_score="clip((cos + 1) / 2, 0, 1)")
        self.info.settings.pop("temperature", None)

    @staticmethod
    def _pair(state: Any) -> List[str]:
        if not isinstance(state, dict) or not all(isinstance(state.get(k), str) for k in ("question", "sentence")):
            raise ValueError("minilm-relevance: a state must be an object with string `question` and `sentence`")
        return [state["question"], state["sentence"]]

    def predict_batch(self, states: List[Any], questions: Dict[str, Any],
                      sort_by_length: bool = False) -> List[Dict[str, Any]]:
        for qid, body in questions.items():
            if not isinstance(body, dict) or body.get("type") != "noul":
                raise ValueError("question %r: the minilm-relevance runner answers noul questions only" % qid)
        texts = [t for state in states for t in self._pair(state)]
        vecs = self._encode(texts, sort_by_length).astype(np.float64)
        cos = np.einsum("ij,ij->i", vecs[0::2], vecs[1::2]).tolist()
        results = []
        for c in cos:
            yes = min(1.0, max(0.0, (c + 1.0) / 2.0))
            answers, facts = {}, {}
            for qid, body in questions.items():
                answers[qid] = answer_from_probs(body, [1.0 - yes, yes])
                facts[qid] = {"relevance_score": yes, "no_score": 1.0 - yes, "native_score": c}
            results.append({"answers": answers, "facts": facts})
        return results
