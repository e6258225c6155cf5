"""A causal LM answering noul questions from one forward pass: next-token P(yes) vs P(no).

The prompt is the template (option `prompt`: a file; default `hf_common.YESNO_TEMPLATE`) with the
case text in its first `{}`, wrapped by the model's chat template as one user turn (S8.2); the run
records the template's SHA-256. From the next-token distribution after the prompt, P(yes) is the
mass on the single-token spellings of yes (`yes`, `Yes`, `YES`, with and without a leading space),
P(no) likewise, and P(true) = P(yes) / (P(yes) + P(no)), stored as `relevance_score` too.
Only noul questions are answered (capabilities); `--model smollm2` loads the packaged SmolLM2.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import hf_common as H
from .base import Capabilities, Runner, RunnerInfo, answer_from_probs

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


class CausalYesNoRunner(Runner):
    name = "hf-causal-yesno"
    capabilities = Capabilities(probabilities=True, batching=True, question_types=("noul",),
                                devices=("cpu", "cuda", "mps"), min_confidence=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return model == H.SMOLLM2 or any(a.endswith("ForCausalLM") for a in H.architectures(model))

    def __init__(self, model: str = H.SMOLLM2, device: str = "cpu", revision: Optional[str] = None,
                 prompt: Optional[str] = None, batch_size: int = 8, **options: Any) -> None:
        H.check_options(self.name, options)
        self.template, sha, where = H.read_template(prompt, H.YESNO_TEMPLATE)
        self.tok, self.lm, loaded_revision, settings = H.load_causal(model, device, revision)
        self.yes_ids = single_token_ids(self.tok, SPELLINGS[0])
        self.no_ids = single_token_ids(self.tok, SPELLINGS[1])
        if not self.yes_ids or not self.no_ids:
            raise ValueError("hf-causal-yesno: %s has no single-token spelling of yes or no" % model)
        self.device, self.batch_size = device, int(batch_size)
        self.info = RunnerInfo(
            runner=self.name, model_id=model, revision=loaded_revision, device=str(device),
            dtype=H.dtype_name(self.lm.dtype),
            max_length=int(getattr(self.lm.config, "max_position_embeddings", 0) or 0) or None,
            settings=dict(settings, decision_rule=RULE, prompt_template=where, prompt_sha256=sha,
                          yes_token_ids=self.yes_ids, no_token_ids=self.no_ids,
                          yes_tokens=[self.tok.decode([i]) for i in self.yes_ids],
                          no_tokens=[self.tok.decode([i]) for i in self.no_ids], batch_size=self.batch_size))

    def p_true(self, prompts: List[str]) -> List[float]:
        import torch

        out: List[float] = []
        with torch.no_grad():
            for part in H.chunks(prompts, self.batch_size):
                # Only the last position's logits are needed: skip the LM head everywhere else.
                enc = H.encode_left_padded(self.tok, part, self.device)
                logits = self.lm(**enc, logits_to_keep=1, use_cache=False).logits[:, -1].float()
                # P(yes)/(P(yes)+P(no)) in log space: the vocabulary normaliser cancels, nothing underflows.
                diff = (torch.logsumexp(logits[:, self.yes_ids], -1)
                        - torch.logsumexp(logits[:, self.no_ids], -1)).cpu()
                out.extend(H.sigmoid(float(d)) for d in diff)
        return out

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        keys = [(i, qid) for i in range(len(states)) for qid in questions]
        prompts = H.render_prompts(self.tok, self.template, [states[i] for i, _ in keys],
                                   [questions[q] for _, q in keys])
        results: List[Dict[str, Any]] = [{"answers": {}, "facts": {}} for _ in states]
        for (i, qid), p in zip(keys, self.p_true(prompts)):
            results[i]["answers"][qid] = answer_from_probs(questions[qid], [1.0 - p, p])
            results[i]["facts"][qid] = {"relevance_score": p}
        return results
