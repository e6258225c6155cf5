"""One lm-evaluation-harness `--log_samples` line -> one decided row (docs/imports.md, "lm-eval").

Read from the harness's own code (lm_eval 0.4.13): `evaluator.py` logs per doc x filter `doc`, `target`,
`arguments` (per request: context, continuation), `filtered_resps` and each metric's per-doc value;
`utils.sanitize_list` turns every leaf of the responses into a string, and a `target` into its `str()`.
`api/task.py` scores a multiple-choice doc as argmax over the options' log-likelihoods (first maximum on
ties), divided by the choice's character length for `acc_norm` and UTF-8 byte length for `acc_bytes`; its
`brier_score` uses softmax of the raw log-likelihoods.
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten
from laya_cases.imports.common import Imported

NORMS = {"raw": "acc", "chars": "acc_norm", "bytes": "acc_bytes"}   # --norm -> the lm-eval metric it reproduces
#: Multilingual task families whose language is part of the task name (the name without it is the qid).
LANGUAGE_IN_NAME = (re.compile(r"^belebele_(?P<lang>[a-z]{3}_[A-Z][a-z]{3})$"),
                    re.compile(r"^xnli_(?P<lang>[a-z]{2})$"),
                    re.compile(r"^global_mmlu_(?:full_)?(?P<lang>[a-z]{2})(?:_|$)"),
                    re.compile(r"^(?:openai_)?mmmlu_(?P<lang>[a-z]{2}_[a-z]{2})(?:_|$)"))
DOC_LANGUAGE_FIELDS = ("language", "lang", "locale")
_TOL_ABS, _TOL_REL = 1e-7, 1e-6        # numpy prints lm-eval's brier probabilities with 8 significant digits


class Task:
    """What a samples file needs from results_<date>.json: the task's name, output type, delimiter, and
    the question id and language its name implies."""

    def __init__(self, name: str, config: Dict[str, Any]):
        self.name = name
        self.output_type = config.get("output_type")
        delim = config.get("target_delimiter")
        self.delimiter = delim if isinstance(delim, str) else " "
        self.language, self.qid = None, name
        for pattern in LANGUAGE_IN_NAME:
            match = pattern.match(name)
            if match:
                self.language = match.group("lang")
                self.qid = name.replace("_" + self.language, "", 1)
                break

    def row_language(self, doc: Any) -> Tuple[Optional[str], str]:
        """(language, qid): the doc's own language field first, else the task name's; the qid is the task
        name without that language, so the languages of one task family share a question."""
        if isinstance(doc, dict):
            for key in DOC_LANGUAGE_FIELDS:
                value = doc.get(key)
                if isinstance(value, str) and value:
                    qid = self.name[:-len(value) - 1] if self.name.endswith("_" + value) else self.qid
                    return value, qid
        return self.language, self.qid


def _continuations(sample: Dict[str, Any], where: str) -> List[str]:
    """The continuation string of every request (dict form {"gen_args_i": {"arg_0", "arg_1"}} or lists)."""
    args = sample.get("arguments")
    if isinstance(args, dict):
        args = [args[k] for k in sorted(args, key=lambda k: int(re.sub(r"\D", "", k) or 0))]
    if not isinstance(args, list):
        raise UsageError("%s field 'arguments' must be a list or object of requests" % where)
    out = []
    for i, req in enumerate(args):
        cont = req.get("arg_1") if isinstance(req, dict) else (req[1] if isinstance(req, list) and len(req) > 1 else None)
        if not isinstance(cont, str):
            raise UsageError("%s field 'arguments'[%d] has no continuation string" % (where, i))
        out.append(cont)
    return out


def _float(text: Any, where: str, field: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise UsageError("%s field %r must hold numbers, got %s" % (where, field, shorten(repr(text), 60))) from None


def _gold(target: Any, choices: List[str], where: str) -> List[int]:
    """Gold option indices, as task.py reads doc_to_target: a choice text, an index (logged as its str()),
    a letter, or a list of indices."""
    if isinstance(target, list):
        return [g for t in target for g in _gold(t, choices, where)]
    if isinstance(target, bool):
        target = str(target)
    if isinstance(target, int) and 0 <= target < len(choices):
        return [target]
    if isinstance(target, str):
        if target in choices:
            return [choices.index(target)]
        if target.strip().lstrip("-").isdigit() and 0 <= int(target) < len(choices):
            return [int(target)]
        if len(target) == 1 and "A" <= target <= "Z" and ord(target) - 65 < len(choices):
            return [ord(target) - 65]
    raise UsageError("%s field 'target' %s is neither a choice, an index nor a letter of the %d choices"
                     % (where, shorten(repr(target), 60), len(choices)))


def _softmax(scores: List[float]) -> List[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = 0.0
    for e in exps:            # left to right, as sql/imports/lmeval_lines.sql sums (sum() compensates from Python 3.12)
        total += e
    return [e / total for e in exps]


def _logged_probs(value: Any, where: str) -> List[float]:
    """lm-eval's per-doc `brier_score`: [gold, "<numpy array text>"]."""
    text = value[1] if isinstance(value, list) and len(value) == 2 else None
    if not isinstance(text, str):
        raise UsageError("%s field 'brier_score' must be [gold, probabilities]" % where)
    return [_float(t, where, "brier_score") for t in text.strip("[] \n").split()]


def choice_row(task: Task, sample: Dict[str, Any], norm: str, path: str, line_no: int,
               item_field: Optional[str]) -> Imported:
    """A multiple-choice doc: a `choice` decision over the choice texts, probabilities = softmax of the
    (normalised) log-likelihoods; lm-eval's own per-doc acc/acc_norm/acc_bytes and brier are checked."""
    where = "%s:%d" % (path, line_no)
    resps = sample.get("filtered_resps")
    if not isinstance(resps, list) or not resps or not all(isinstance(r, list) and r for r in resps):
        raise UsageError("%s field 'filtered_resps' must be a list of [loglikelihood, is_greedy] pairs" % where)
    lls = [_float(r[0], where, "filtered_resps") for r in resps]
    conts = _continuations(sample, where)
    if "acc_mutual_info" in sample and len(lls) == len(conts) and len(lls) % 2 == 0:
        lls, conts = lls[:len(lls) // 2], conts[:len(conts) // 2]      # the unconditional half is not an option
    if len(conts) != len(lls):
        raise UsageError("%s has %d log-likelihoods for %d choices" % (where, len(lls), len(conts)))
    d = task.delimiter
    choices = [c[len(d):] if d and c.startswith(d) else c for c in conts]
    gold = _gold(sample.get("target"), choices, where)
    size = {"raw": lambda c: 1.0, "chars": lambda c: float(len(c)), "bytes": lambda c: float(len(c.encode("utf-8")))}[norm]
    scores = [ll / size(c) if size(c) else ll for ll, c in zip(lls, choices)]
    pred = scores.index(max(scores))
    probs = _softmax(scores)
    labels = choices if len(set(choices)) == len(choices) and all(choices) else [str(i) for i in range(len(choices))]
    _check(sample, norm, scores, pred, gold, probs, where)
    language, qid = task.row_language(sample.get("doc"))
    body = {"type": "choice", "instructions": qid,
            "criteria": labels if labels is choices else dict(zip(labels, choices))}
    expected = labels[gold[0]] if len(gold) == 1 else [labels[g] for g in gold]   # a list: unscored (S2.9)
    answer = {"type": "choice", "choice": labels[pred], "probabilities": dict(zip(labels, probs)),
              "answer_confidence": max(probs)}
    raw = _labelled(task, sample, qid, body, expected, language, item_field, where)
    return Imported(path, line_no, raw, {qid: answer}, {qid: {"logits": lls}})


def _check(sample: Dict[str, Any], norm: str, scores: List[float], pred: int, gold: List[int],
           probs: List[float], where: str) -> None:
    """Our decision must be lm-eval's: the metric --norm reproduces (rows with an exact tie excepted: which
    tied option wins is argmax's order, not a decision) and, under raw, the brier probabilities."""
    metric = NORMS[norm]
    logged = sample.get(metric)
    if isinstance(logged, (int, float)) and scores.count(max(scores)) == 1:
        ours = 1.0 if pred in gold else 0.0
        if float(logged) != ours:
            raise UsageError("%s field %r: lm-eval logged %r, the import decides %r (--norm %s)"
                             % (where, metric, logged, ours, norm))
    if norm == "raw" and "brier_score" in sample:
        theirs = _logged_probs(sample["brier_score"], where)
        if len(theirs) != len(probs) or any(abs(p - q) > _TOL_ABS + _TOL_REL * abs(q) for p, q in zip(probs, theirs)):
            raise UsageError("%s field 'brier_score': lm-eval's probabilities %s differ from the softmax of the "
                             "log-likelihoods" % (where, shorten(repr(theirs), 80)))


def generated_row(task: Task, sample: Dict[str, Any], path: str, line_no: int, item_field: Optional[str]) -> Imported:
    """A generative doc: a `noul` decision whose P(true) is the logged metric (exact_match first), gold
    true, and no confidence: a generated answer has none unless the log gives one."""
    where = "%s:%d" % (path, line_no)
    names = [m for m in (sample.get("metrics") or []) if isinstance(m, str) and isinstance(sample.get(m), (int, float))
             and not isinstance(sample.get(m), bool)]
    if not names:
        raise UsageError("%s has no numeric per-doc metric to score the generation by" % where)
    metric = "exact_match" if "exact_match" in names else names[0]
    resps = sample.get("filtered_resps")
    response = resps[0] if isinstance(resps, list) and resps else resps
    language, qid = task.row_language(sample.get("doc"))
    body = {"type": "noul", "instructions": "%s (%s)" % (qid, metric)}
    answer = {"type": "noul", "noul": float(sample[metric]), "metric": metric,
              "response": response if isinstance(response, str) else str(response)}
    raw = _labelled(task, sample, qid, body, True, language, item_field, where)
    no_confidence = {"confidence": None, "confidence_source": None, "gate_confidence": None}
    return Imported(path, line_no, raw, {qid: answer}, {qid: no_confidence})


def _labelled(task: Task, sample: Dict[str, Any], qid: str, body: Dict[str, Any], expected: Any,
              language: Optional[str], item_field: Optional[str], where: str) -> Dict[str, Any]:
    doc = sample.get("doc")
    if item_field is None:
        item = sample.get("doc_id")
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise UsageError("%s field 'doc_id' must be an integer" % where)
    else:
        item = doc.get(item_field) if isinstance(doc, dict) else None
        if item is None:
            raise UsageError("%s field 'doc' has no %r (--item-id)" % (where, item_field))
    tags = [task.name] + ([sample["filter"]] if sample.get("filter") not in (None, "none") else [])
    raw = {"state": doc, "questions": {qid: body}, "expected": {qid: expected}, "tags": tags, "item_id": str(item)}
    if language is not None:
        raw["language"] = language
    return raw
