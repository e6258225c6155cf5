"""A causal LM answering noul questions from one forward pass: next-token P(yes) vs P(no).

The prompt is the template (option `prompt`: a file; default `hf_common.YESNO_TEMPLATE`) with the
case text in its first `{}`, wrapped by the model's chat template as one user turn (S8.2); the run
records the template's SHA-256. From the next-token distribution after the prompt, P(yes) is the
mass on the single-token spellings of yes (`yes`, `Yes`, `YES`, with and without a leading space),
P(no) likewise, and P(true) = P(yes) / (P(yes) + P(no)), stored as `relevance_score` too.
This noul path is unchanged by the choice path. Choice and score questions are answered by
option log-likelihood (hf_causal_choice: lm-evaluation-harness multiple choice, options
`normalisation` = sum|chars|tokens and `choice_batching` = prefix|full, both recorded in the
settings). `--model smollm2` loads the packaged SmolLM2.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core import questions as Q
from laya_cases.runners import hf_common as H
from laya_cases.runners.base import Capabilities, answer_from_probs
from laya_cases.runners.hf_base import DEVICES, CausalLMRunner
from laya_cases.runners.hf_causal_choice import ChoiceByLikelihood

SPELLINGS = ("yes", "Yes", "YES"), ("no", "No", "NO")
RULE = ("causal LM, one forward pass: P(true) = P(yes) / (P(yes) + P(no)) over the next-token "
        "distribution after the prompt; P(yes) = summed probability of the single-token spellings "
        "yes/Yes/YES with and without a leading space (P(no) likewise); noul = P(true)")


def single_token_ids(tok: Any, words) -> List[int]:
    ids = []
    for word in words:
        for spelling in (word, " " + word):
            enc = tok.encode(spelling, add_special_tokens=False)
            if len(enc) == 1 and enc[0] not in ids:
                ids.append(enc[0])
    return ids


class CausalYesNoRunner(ChoiceByLikelihood, CausalLMRunner):
    name = "hf-causal-yesno"
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES, devices=DEVICES,
                                min_confidence=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return model == H.SMOLLM2 or any(a.endswith("ForCausalLM") for a in H.architectures(model))

    def __init__(self, model: str = H.SMOLLM2, device: str = "cpu", revision: Optional[str] = None,
                 prompt: Optional[str] = None, batch_size: int = 8, normalisation: str = "chars",
                 choice_batching: str = "prefix", **options: Any) -> None:
        H.check_options(self.name, options)
        choice_settings = self._choice_setup(normalisation, choice_batching)    # refused before the model loads
        loaded_revision, settings = self._load(model, device, revision, prompt, batch_size)
        self.yes_ids = single_token_ids(self.tok, SPELLINGS[0])
        self.no_ids = single_token_ids(self.tok, SPELLINGS[1])
        if not self.yes_ids or not self.no_ids:
            raise ValueError("hf-causal-yesno: %s has no single-token spelling of yes or no" % model)
        settings.update(choice_settings)
        self._record_lm(model, loaded_revision, dict(
            settings, decision_rule=RULE, yes_token_ids=self.yes_ids, no_token_ids=self.no_ids,
            yes_tokens=[self.tok.decode([i]) for i in self.yes_ids],
            no_tokens=[self.tok.decode([i]) for i in self.no_ids]))

    def p_true(self, prompts: List[str]) -> List[float]:
        import torch

        def forward(part):
            # Only the last position's logits are needed: skip the LM head everywhere else.
            enc = H.encode_left_padded(self.tok, part, self.device)
            logits = self.lm(**enc, logits_to_keep=1, use_cache=False).logits[:, -1].float()
            # P(yes)/(P(yes)+P(no)) in log space: the vocabulary normaliser cancels, nothing underflows.
            diff = (torch.logsumexp(logits[:, self.yes_ids], -1)
                    - torch.logsumexp(logits[:, self.no_ids], -1)).cpu()
            return [H.sigmoid(float(d)) for d in diff]
        return self._in_batches(prompts, forward)

    _outputs = p_true

    def _decide(self, body: Dict[str, Any], p: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        return answer_from_probs(body, [1.0 - p, p]), {"relevance_score": p}

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        """noul questions through the P(yes) path above, choice and score by option log-likelihood."""
        noul = {q: b for q, b in questions.items() if isinstance(b, dict) and b.get("type") == "noul"}
        results = super().predict_batch(states, noul) if noul else [{"answers": {}, "facts": {}} for _ in states]
        for state, result in zip(states, results):
            answers, facts = result["answers"], result["facts"]
            for qid, body in questions.items():
                if qid not in noul:
                    answers[qid], facts[qid] = self.choice_answer(state, body)
            result["answers"] = {q: answers[q] for q in questions}   # the questions' order
            result["facts"] = {q: facts[q] for q in questions if q in facts}
        return results
