"""Generate-and-parse: a causal LM writes a reply, a yes/no verdict is parsed from it (S8.3).

Decoding is greedy, at most `max_new_tokens` new tokens; the prompt is built as in
hf_causal_yesno (S8.2, template SHA-256 recorded). The token-selection rule, recorded with the run:
the exact answer (the whole reply, trimmed of whitespace and punctuation, is yes or no), else the
leading token, else the last standalone token; "standalone" = case-insensitive whole word, not
part of a longer word, a hyphenated word or a contraction. Every decision keeps its raw text
(`raw_text`) and whether it parsed (`parsed`).

A reply with no standalone yes/no, or one that used up `max_new_tokens` without ending, is
*unparsed*: no verdict is guessed. How it is stored, and why:
the reference scores a noul answer as `(answer.get("noul", 0.0) >= 0.5) == label`, so any `noul`
value -- or none, which reads as 0.0 = "no" -- would be counted right for one of the two labels.
An unparsed reply is therefore stored as an answer of type `unparsed` (`{"type": "unparsed",
"question_type": "noul", "raw_text": ..., "truncated": ...}`): a case, never an error, never
dropped, with `parsed = false`, no predicted value, no confidence and `correct` null. The
reference-shaped metrics skip it exactly as the reference would (every evaluator returns None for a
non-noul answer type), so `noul_accuracy` is the accuracy over parsed verdicts, and it is never
counted as right. The S8.4 view (unparsed counted as errors in accuracy, `unparsed_rate`) reads the
`parsed` and `correct` columns: accuracy = count(correct) / count(*), unparsed_rate =
count(NOT parsed) / count(*) over the run's noul cases.

A parsed verdict is `{"type": "noul", "noul": 1.0 | 0.0}` with no confidence fields: a greedy
verdict carries no probability (the metrics' S2.7 fallback reads max(p, 1-p) = 1.0), so the
runner declares no probabilities and refuses the abstention gate.
"""
from __future__ import annotations

import re
import string
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.runners import hf_common as H
from laya_cases.runners.base import Capabilities
from laya_cases.runners.hf_base import DEVICES, CausalLMRunner

_WORD = re.compile(r"(?<![\w'\-])(yes|no)(?![\w'\-])", re.IGNORECASE)
_LEADING = re.compile(r"^\W*(yes|no)(?![\w'\-])", re.IGNORECASE)
RULE = ("greedy generation; verdict = exact answer (whole reply trimmed of whitespace/punctuation is "
        "yes|no, case-insensitive), else leading token, else last standalone whole-word yes|no; no "
        "standalone yes/no, or max_new_tokens exhausted -> unparsed (answer type 'unparsed', raw text kept)")


def parse_verdict(text: str) -> Optional[str]:
    """'yes', 'no', or None (unparsed) by the recorded token-selection rule."""
    exact = text.strip().strip(string.punctuation + string.whitespace).lower()
    if exact in ("yes", "no"):
        return exact
    lead = _LEADING.match(text)
    if lead:
        return lead.group(1).lower()
    found = _WORD.findall(text)
    return found[-1].lower() if found else None


def verdict_answer(text: str, truncated: bool) -> Dict[str, Any]:
    """The stored answer for one reply (see the module doc for the unparsed shape)."""
    verdict = None if truncated else parse_verdict(text)
    if verdict is None:
        return {"type": "unparsed", "question_type": "noul", "raw_text": text, "truncated": bool(truncated)}
    return {"type": "noul", "noul": 1.0 if verdict == "yes" else 0.0}


class GenerateRunner(CausalLMRunner):
    name = "hf-generate"
    capabilities = Capabilities(probabilities=False, batching=True, question_types=("noul",), devices=DEVICES,
                                min_confidence=False)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return False                      # the same models as hf-causal-yesno: chosen by name only

    def __init__(self, model: str = H.SMOLLM2, device: str = "cpu", revision: Optional[str] = None,
                 prompt: Optional[str] = None, max_new_tokens: int = 64, batch_size: int = 8,
                 **options: Any) -> None:
        H.check_options(self.name, options)
        loaded_revision, settings = self._load(model, device, revision, prompt, batch_size)
        self.max_new_tokens = int(max_new_tokens)
        self._record_lm(model, loaded_revision, dict(settings, decision_rule=RULE, decoding="greedy",
                                                     max_new_tokens=self.max_new_tokens))

    def generate(self, prompts: List[str]) -> List[tuple]:
        """(reply text, truncated) per prompt."""
        stop = set()
        for ids in (self.lm.generation_config.eos_token_id, self.tok.eos_token_id):
            stop.update(ids if isinstance(ids, (list, tuple)) else [ids] if ids is not None else [])

        def forward(part):
            enc = H.encode_left_padded(self.tok, part, self.device)
            enc.pop("position_ids")           # generate derives them from the mask
            gen = self.lm.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                   pad_token_id=self.tok.pad_token_id)
            out = []
            for ids in gen[:, enc["input_ids"].shape[1]:].cpu().tolist():
                ended = any(t in stop for t in ids)
                if ended:
                    ids = ids[:next(i for i, t in enumerate(ids) if t in stop)]
                out.append((self.tok.decode(ids, skip_special_tokens=True), not ended))
            return out
        return self._in_batches(prompts, forward)

    _outputs = generate

    def _decide(self, body: Dict[str, Any], output: tuple) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        text, truncated = output
        answer = verdict_answer(text, truncated)
        return answer, {"raw_text": text, "parsed": answer["type"] == "noul"}
