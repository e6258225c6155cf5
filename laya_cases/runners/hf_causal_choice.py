"""Choice and score questions for a causal LM: each option's log-likelihood as a continuation of the prompt.

The multiple-choice method of lm-evaluation-harness. The prompt is `CHOICE_TEMPLATE` with the case
text (`Text: <state>`, `Question: <instructions>`, then the options one per line as `- <option>`)
in its `{}`, wrapped by the model's chat template as one user turn with the assistant turn opened;
each option's continuation is its S2.3 rendering (`label: description`, `level i: text`). For
option i with continuation tokens c_1..c_m:

    ll_i = sum_j log P(c_j | prompt, c_<j)          (natural log, float32 logits)

and the score the softmax reads is, by the run's `normalisation` (recorded in the settings):

* `sum`    -- ll_i                                   (lm-eval `acc`)
* `chars`  -- ll_i / len(option text in characters)  (lm-eval `acc_norm`; the default)
* `tokens` -- ll_i / m                               (mean log-probability per token)

p = softmax(score) at temperature 1; the decision row stores the scores as `logits` and 1.0 as
`temperature`, so p re-derives from the store. Continuations are tokenised on their own (the
prompt ends at the chat template's newline, so no token straddles the boundary).

Batching (`choice_batching`, recorded): `prefix` (the default) runs the prompt once with the key/value
cache, repeats the cache once per option and runs all continuations in one right-padded batch;
`full` runs the K sequences prompt + continuation in one left-padded batch. They agree to float
rounding (tests/runners/test_causal_choice.py); `prefix` reads the prompt once instead of K times.
"""
from __future__ import annotations

import hashlib
import inspect
from typing import Any, Dict, List, Sequence, Tuple

from laya_cases.core import questions as Q
from laya_cases.runners import hf_common as H
from laya_cases.runners.base import answer_from_probs, softmax

CHOICE_TEMPLATE = ("Read the text and answer the question with one of the options, written exactly as "
                   "listed.\n\n{}\n\nAnswer:")
NORMALISATIONS = ("sum", "chars", "tokens")
BATCHINGS = ("prefix", "full")
CHOICE_RULE = ("causal LM log-likelihood of each option's S2.3 text as a continuation of the choice prompt "
               "(lm-evaluation-harness multiple choice); score = summed log-probability, divided per the "
               "recorded normalisation; p = softmax(score), T = 1; choice = argmax, score = sum i*p_i")


def choice_case_text(state: Any, body: Dict[str, Any]) -> str:
    """What CHOICE_TEMPLATE's `{}` receives: the text, the question, the options one per line."""
    options = "\n".join("- %s" % t for t in Q.option_texts(body))
    return "Text: %s\nQuestion: %s\nOptions:\n%s" % (H.prompt_text(state), Q.instructions_text(body), options)


def normalised(loglik: float, text: str, n_tokens: int, normalisation: str) -> float:
    if normalisation == "chars":
        return loglik / max(1, len(text))
    if normalisation == "tokens":
        return loglik / max(1, n_tokens)
    return loglik


class ChoiceByLikelihood:
    """Mixin for a CausalLMRunner (`tok`, `lm`, `device` loaded): answers choice and score questions."""

    normalisation = "chars"
    choice_batching = "prefix"

    def _choice_setup(self, normalisation: str, batching: str) -> Dict[str, Any]:
        if normalisation not in NORMALISATIONS:
            raise ValueError("normalisation must be one of %s, got %r" % (", ".join(NORMALISATIONS), normalisation))
        if batching not in BATCHINGS:
            raise ValueError("choice_batching must be one of %s, got %r" % (", ".join(BATCHINGS), batching))
        self.normalisation, self.choice_batching = normalisation, batching
        digest = hashlib.sha256(CHOICE_TEMPLATE.encode("utf-8")).hexdigest()
        return {"choice_rule": CHOICE_RULE, "choice_prompt_sha256": digest,
                "normalisation": normalisation, "choice_batching": batching, "choice_temperature": 1.0}

    def choice_prompt(self, state: Any, body: Dict[str, Any]) -> str:
        text = H.fill(CHOICE_TEMPLATE, choice_case_text(state, body))
        if getattr(self.tok, "chat_template", None):
            text = self.tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                tokenize=False)
        return text

    def _token_ids(self, prompt: str, options: Sequence[str]) -> Tuple[List[int], List[List[int]]]:
        special = not bool(getattr(self.tok, "chat_template", None))
        ctx = list(self.tok(prompt, add_special_tokens=special)["input_ids"])
        conts = [list(self.tok(o, add_special_tokens=False)["input_ids"]) for o in options]
        if not ctx or any(not c for c in conts):
            raise ValueError("an option or the prompt tokenises to nothing")
        return ctx, conts

    def option_logliks(self, prompt: str, options: Sequence[str]) -> List[Tuple[float, int]]:
        """(summed log-probability, token count) of each option after `prompt`."""
        import torch

        ctx, conts = self._token_ids(prompt, options)
        with torch.inference_mode():
            forward = self._prefix_forward if self.choice_batching == "prefix" else self._full_forward
            rows = forward(ctx, conts)
        return [(float(sum(r)), len(r)) for r in rows]

    def _prefix_forward(self, ctx: List[int], conts: List[List[int]]) -> List[List[float]]:
        """The prompt once with its cache; the cache repeated per option; continuations right-padded."""
        import torch

        out = self.lm(input_ids=torch.tensor([ctx], device=self.device), use_cache=True, logits_to_keep=1)
        first = torch.log_softmax(out.logits[0, -1].float(), -1)
        rows = [[float(first[c[0]])] for c in conts]
        width = max(len(c) for c in conts) - 1
        if width == 0:
            return rows
        cache = out.cache if hasattr(out, "cache") else out.past_key_values    # transformers 5 / 4 names
        if not hasattr(cache, "batch_repeat_interleave"):     # a cache that cannot be repeated per option
            return self._full_forward(ctx, conts)
        cache.batch_repeat_interleave(len(conts))
        key = "cache" if "cache" in inspect.signature(self.lm.forward).parameters else "past_key_values"
        pad = self.tok.pad_token_id or 0
        ids = torch.tensor([c[:-1] + [pad] * (width - len(c) + 1) for c in conts], device=self.device)
        real = torch.tensor([[1] * (len(c) - 1) + [0] * (width - len(c) + 1) for c in conts], device=self.device)
        mask = torch.cat([torch.ones(len(conts), len(ctx), dtype=real.dtype, device=self.device), real], 1)
        positions = (len(ctx) + torch.arange(width, device=self.device)).unsqueeze(0).expand(len(conts), -1)
        logp = torch.log_softmax(self.lm(input_ids=ids, attention_mask=mask, position_ids=positions,
                                         use_cache=False, **{key: cache}).logits.float(), -1)
        for k, c in enumerate(conts):
            rows[k].extend(float(logp[k, j - 1, c[j]]) for j in range(1, len(c)))
        return rows

    def _full_forward(self, ctx: List[int], conts: List[List[int]]) -> List[List[float]]:
        """Prompt + continuation (last token dropped) for every option, left-padded, one forward."""
        import torch

        seqs = [ctx + c[:-1] for c in conts]
        length = max(len(s) for s in seqs)
        pad = self.tok.pad_token_id or 0
        ids = torch.tensor([[pad] * (length - len(s)) + s for s in seqs], device=self.device)
        mask = torch.tensor([[0] * (length - len(s)) + [1] * len(s) for s in seqs], device=self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        keep = max(len(c) for c in conts)
        logits = self.lm(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False,
                         logits_to_keep=keep).logits.float()
        logp = torch.log_softmax(logits, -1)
        # Row k's continuation token j is predicted at kept position keep - len(c) + j.
        return [[float(logp[k, keep - len(c) + j, c[j]]) for j in range(len(c))] for k, c in enumerate(conts)]

    def choice_answer(self, state: Any, body: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(answer, facts) for one choice or score question."""
        texts = Q.option_texts(body)
        if not texts:
            raise ValueError("%s criteria give no options" % body.get("type"))
        scores = [normalised(ll, text, n, self.normalisation)
                  for (ll, n), text in zip(self.option_logliks(self.choice_prompt(state, body), texts), texts)]
        return answer_from_probs(body, softmax(scores, 1.0)), {"logits": scores, "temperature": 1.0}
