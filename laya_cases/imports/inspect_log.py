"""inspect_ai logs (`.eval`, `.json`) -> runs: one run per log (docs/imports.md, "inspect").

Read through inspect's own API (`inspect_ai.log.read_eval_log`: its maintainers say the file format is
not frozen), the optional extra `inspect`. Without it only a `.json` log can be read, as the JSON
serialisation of inspect's EvalLog that it is. A sample with `choices` and a letter `target` is a `choice`
decision over the choice texts, predicted = the scorer's `answer` letter; every epoch is one more row of
the same item (a repeat: its case id is numbered `#2`, ...). Probabilities only when the answer token's `top_logprobs`
name the option letters; otherwise the decision is hard: accuracy, slices and flips, no calibration.
"""
from __future__ import annotations

import math
import os
from typing import Any, Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.interop.extras import install_hint
from laya_cases.imports.common import Imported, Source, read_json

NO_LOGPROBS = ("calibration unavailable: %s has no logprobs, so its decisions carry no confidence (accuracy, "
               "slices and flips only; ece, brier and aurc are absent with reason no_applicable_case)")


def _load(path: str) -> Dict[str, Any]:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        if path.endswith(".json"):
            return read_json(path)
        raise UsageError("%s: reading an inspect .eval log needs inspect_ai: %s" % (path, install_hint("inspect").split(" (or:")[0])) from None
    try:
        return read_eval_log(path).model_dump(mode="json", exclude_none=False)
    except Exception as exc:                   # noqa: BLE001 -- inspect raises many kinds; one line names the file
        raise UsageError("%s cannot be read as an inspect log: %s" % (path, str(exc).splitlines()[0][:200])) from None


def log_files(path: str) -> List[str]:
    if os.path.isfile(path):
        return [path]
    found = sorted(os.path.join(d, n) for d, _, names in os.walk(path) for n in names if n.endswith((".eval", ".json")))
    if not found:
        raise UsageError("%s holds no inspect log (.eval or .json)" % path)
    return found


class Log:
    """One inspect log: its Source (identity) and its samples as rows."""

    def __init__(self, path: str):
        self.path, self.log = path, _load(path)
        ev = self.log.get("eval") if isinstance(self.log, dict) else None
        if not isinstance(ev, dict) or not isinstance(self.log.get("samples"), list):
            raise UsageError("%s field 'samples' is missing: not an inspect log with samples" % path)
        self.task = str(ev.get("task") or "inspect")
        version = (ev.get("packages") or {}).get("inspect_ai")
        self.has_logprobs = any(_answer_logprobs(s) for s in self.log["samples"] if isinstance(s, dict))
        notes = [] if self.has_logprobs else [NO_LOGPROBS % path]
        self.source = Source(harness="inspect", version=version, model=ev.get("model"), tasks=[self.task],
                             files=[path], normalisation={"probabilities": "answer-token top_logprobs"
                                                          if self.has_logprobs else "none (hard decisions)"},
                             notes=notes, label=path)

    def rows(self) -> Iterator[Imported]:
        for i, sample in enumerate(self.log["samples"]):
            yield self._row(i, sample)

    def _row(self, i: int, sample: Any) -> Imported:
        where = "%s samples[%d]" % (self.path, i)
        if not isinstance(sample, dict):
            raise UsageError("%s must be an object" % where)
        choices, target = sample.get("choices"), sample.get("target")
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise UsageError("%s field 'choices' must be a non-empty list of strings (only multiple-choice samples "
                             "are decisions)" % where)
        letters = [chr(65 + k) for k in range(len(choices))]
        gold = target[0] if isinstance(target, list) and len(target) == 1 else target
        if gold not in letters:
            raise UsageError("%s field 'target' must be one of the letters %s, got %r" % (where, "".join(letters), target))
        answer_letter = _scored_answer(sample, where)
        labels = choices if len(set(choices)) == len(choices) else letters
        answer: Dict[str, Any] = {"type": "choice", "choice": labels[letters.index(answer_letter)]
                                  if answer_letter in letters else answer_letter}
        probs = _probabilities(sample, letters)
        if probs is not None:
            answer["probabilities"] = dict(zip(labels, probs))
            if answer_letter in letters:
                answer["answer_confidence"] = probs[letters.index(answer_letter)]
        meta = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
        qid = self.task
        raw = {"state": sample.get("input"), "questions": {qid: {"type": "choice", "instructions": qid,
                                                                  "criteria": labels}},
               "expected": {qid: labels[letters.index(gold)]}, "item_id": str(sample.get("id")),
               "tags": ["epoch=%s" % sample.get("epoch")]}
        lang = next((meta[k] for k in ("language", "lang", "locale") if isinstance(meta.get(k), str)), None)
        if lang is not None:
            raw["language"] = lang
        return Imported(self.path, i + 1, raw, {qid: answer})


def _scored_answer(sample: Dict[str, Any], where: str) -> Optional[str]:
    """The letter the (first) scorer read from the model's output; None when it found none."""
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        raise UsageError("%s field 'scores' is empty: the sample was not scored (an errored sample?)" % where)
    first = scores[sorted(scores)[0]]
    answer = first.get("answer") if isinstance(first, dict) else None
    return answer.strip() if isinstance(answer, str) and answer.strip() else None


def _answer_logprobs(sample: Dict[str, Any]) -> Optional[List[Dict[str, Any]]]:
    """The top_logprobs of the output's last token that is an option letter."""
    try:
        content = sample["output"]["choices"][0]["logprobs"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    for token in reversed(content or []):
        text = (token.get("token") or "").strip() if isinstance(token, dict) else ""
        if len(text) == 1 and "A" <= text <= "Z" and token.get("top_logprobs"):
            return token["top_logprobs"]
    return None


def _probabilities(sample: Dict[str, Any], letters: List[str]) -> Optional[List[float]]:
    """P(letter) from the answer token's top_logprobs, renormalised over the option letters (a letter the
    top list leaves out gets 0); None without logprobs or when no option letter is among them."""
    top = _answer_logprobs(sample)
    if not top:
        return None
    logp: Dict[str, float] = {}
    for entry in top:
        text = (entry.get("token") or "").strip()
        if text in letters and text not in logp and isinstance(entry.get("logprob"), (int, float)):
            logp[text] = float(entry["logprob"])
    if not logp:
        return None
    best = max(logp.values())
    weights = [math.exp(logp[l] - best) if l in logp else 0.0 for l in letters]
    total = sum(weights)
    return [w / total for w in weights]


def logs(path: str) -> List[Log]:
    return [Log(p) for p in log_files(path)]
