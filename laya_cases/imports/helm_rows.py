"""One HELM instance (its request states) -> one `choice` decision, checked against HELM's own per-instance
stats (docs/imports.md, "HELM"); helm.py reads the files and groups the request states.

The rules are HELM's (crfm-helm 0.5.16). Joint (metrics/evaluate_reference_metrics.py
compute_reference_metrics): the completions sorted by -logprob, the first one's text stripped (through
`adapter_spec.output_mapping_pattern` when set) and mapped by `output_mapping` is the prediction;
`exact_match` = 1 when it equals a correct reference's text (both stripped); `max_prob` = exp(that
completion's logprob). Separate (metrics/basic_metrics.py BasicReferenceMetric.evaluate_references): a
reference's logprob is the sum over the completion's last n tokens, n = the length of " " + reference in
the model's tokens; its score is logprob / n (`original`) or logprob - the calibration request's logprob
(`calibrated`); `max_prob` = max softmax(scores), `predicted_index` = the first argmax, `exact_match` =
|correct ∩ argmaxes| / |argmaxes|. HELM does not log n: it is the shortest tail of the tokens whose texts
join to " " + reference, and the check against `max_prob` proves each reading.
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Tuple

from laya_cases.core.errors import UsageError, shorten

JOINT = ("multiple_choice_joint",)
SEPARATE = {"multiple_choice_separate_original": "logprob / num_tokens",
            "multiple_choice_separate_calibrated": "logprob - calibration logprob"}
_TOL = 1e-9                       # HELM's numpy/scipy float64 against our math: same formulas, other order
_MARKS = re.compile(r"[\s\u2581\u0120]")     # whitespace and the sentencepiece / byte-level BPE space marks

Row = Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]
Logged = Tuple[str, Dict[str, List[Any]]]        # (per_instance_stats.json [j], {stat name: [per-instance means]})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _instance(instance: Dict[str, Any], where: str,
              qid: str) -> Tuple[Dict[str, Any], List[str], List[str], List[int]]:
    """(the labelled row without its answer and tags, the option labels, the reference texts, the gold indices)."""
    refs = instance.get("references")
    if not isinstance(refs, list) or not refs:
        raise UsageError("%s field 'instance.references' must be a non-empty list" % where)
    texts, golds = [], []
    for k, ref in enumerate(refs):
        output = ref.get("output") if isinstance(ref, dict) else None
        text = output.get("text") if isinstance(output, dict) else None
        tags = ref.get("tags") if isinstance(ref, dict) else None
        if not isinstance(text, str) or not isinstance(tags, list):
            raise UsageError("%s field 'instance.references[%d]' must have output.text and tags" % (where, k))
        texts.append(text)
        if "correct" in tags:
            golds.append(k)
    if not golds:
        raise UsageError("%s field 'instance.references': no reference is tagged 'correct'" % where)
    text = instance.get("input", {}).get("text") if isinstance(instance.get("input"), dict) else None
    if not isinstance(text, str):
        raise UsageError("%s field 'instance.input.text' must be text" % where)
    stripped = [t.strip() for t in texts]
    plain = len(set(stripped)) == len(texts) and all(stripped)
    labels = stripped if plain else [str(k) for k in range(len(texts))]
    body = {"type": "choice", "instructions": qid, "criteria": labels if plain else dict(zip(labels, texts))}
    expected = labels[golds[0]] if len(golds) == 1 else [labels[g] for g in golds]   # a list: unscored (S2.9)
    raw = {"state": text, "questions": {qid: body}, "expected": {qid: expected}, "item_id": instance["id"]}
    return raw, labels, texts, golds


def _check(logged: Logged, name: str, ours: float, where: str, exact: bool = False) -> None:
    """HELM's per-instance `name` (per_instance_stats.json) must be ours; a stat HELM did not log is not checked."""
    at, stats = logged
    values = [v for v in stats.get(name, []) if v is not None]
    if len(set(values)) > 1:
        raise UsageError("%s field 'stats.%s': %d different values for one instance" % (at, name, len(set(values))))
    if not values:
        return
    theirs = float(values[0])
    if (theirs != ours) if exact else abs(theirs - ours) > _TOL * max(1.0, abs(theirs)):
        raise UsageError("%s field 'stats.%s': HELM logged %r, the import decides %r (from %s)"
                         % (at, name, theirs, ours, where))


def _completions(state: Dict[str, Any], where: str) -> List[Dict[str, Any]]:
    result = state.get("result")
    completions = result.get("completions") if isinstance(result, dict) else None
    if not isinstance(completions, list) or not completions:
        raise UsageError("%s field 'result.completions' must be a non-empty list (was the request made?)" % where)
    for c in completions:
        if not isinstance(c, dict) or not isinstance(c.get("text"), str) or not _number(c.get("logprob")):
            raise UsageError("%s field 'result.completions[].logprob' must be a number (with its text)" % where)
    return completions


def joint_row(method: str, adapter: Dict[str, Any], states: List[Tuple[int, Dict[str, Any]]],
              logged: Logged, path: str, qid: str) -> Row:
    """One request: the mapped top completion is the choice, exp(its logprob) = HELM's max_prob the confidence."""
    where = "%s request_states[%d]" % (path, states[0][0])
    if len(states) != 1:
        raise UsageError("%s: %d request states for one instance of a multiple_choice_joint run" % (where, len(states)))
    state = states[0][1]
    raw, labels, texts, golds = _instance(state["instance"], where, qid)
    mapping = state.get("output_mapping")
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise UsageError("%s field 'output_mapping' must map answer letters to reference texts" % where)
    top = sorted(_completions(state, where), key=lambda c: -c["logprob"])[0]
    said = top["text"].strip()
    pattern = adapter.get("output_mapping_pattern")
    if isinstance(pattern, str) and pattern:
        match = re.search(pattern, said)
        said = "" if not match else match.group(1) if match.groups() else match.group(0)
    mapped = mapping.get(said)
    em = 1.0 if mapped and any(texts[g].strip() == mapped.strip() for g in golds) else 0.0
    max_prob = math.exp(top["logprob"])
    _check(logged, "exact_match", em, where, exact=True)
    _check(logged, "max_prob", max_prob, where)
    index = next((g for g in golds if mapped and texts[g].strip() == mapped.strip()),   # two equal texts: the
                 texts.index(mapped) if mapped in texts else None)                       # gold, as HELM scores
    # an answer that maps to no reference is no option (HELM scores it 0): no choice, its text kept in `response`
    answer = {"type": "choice", "choice": labels[index] if index is not None else None,
              "answer_confidence": max_prob, "max_prob": max_prob, "response": top["text"]}
    return raw, answer, {}


def _reference_logprob(state: Dict[str, Any], reference: str, where: str) -> Tuple[float, int]:
    """(sum of the last n tokens' logprobs, n) for the shortest tail of tokens spelling " " + reference
    (exactly, else with whitespace and space marks ignored)."""
    tokens = _completions(state, where)[0].get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, dict) and isinstance(t.get("text"), str)
                                               and _number(t.get("logprob")) for t in tokens):
        raise UsageError("%s field 'result.completions[0].tokens' must be a list of {text, logprob}" % where)
    for same in (lambda a, b: a == b, lambda a, b: _MARKS.sub("", a) == _MARKS.sub("", b)):
        tail = ""
        for n in range(1, len(tokens) + 1):
            tail = tokens[-n]["text"] + tail
            if same(tail, " " + reference):
                return sum(t["logprob"] for t in tokens[-n:]), n      # HELM's own sum, in order
    raise UsageError("%s field 'result.completions[0].tokens': no tail of the tokens spells the reference %s"
                     % (where, shorten(repr(reference), 60)))


def _softmax(scores: List[float]) -> List[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def separate_row(method: str, adapter: Dict[str, Any], states: List[Tuple[int, Dict[str, Any]]],
                 logged: Logged, path: str, qid: str) -> Row:
    """One request per reference (and mode): probabilities = softmax of HELM's reference scores; the raw
    per-reference logprobs are the logits; exact_match, max_prob and predicted_index are checked."""
    where = "%s request_states[%d]" % (path, states[0][0])
    raw, labels, texts, golds = _instance(states[0][1]["instance"], where, qid)
    modes = ("original", "calibration") if method.endswith("calibrated") else ("original",)
    found: Dict[Tuple[int, str], Tuple[float, int]] = {}
    for i, state in states:
        at = "%s request_states[%d]" % (path, i)
        index, mode = state.get("reference_index"), state.get("request_mode") or "original"
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(texts) or mode not in modes:
            raise UsageError("%s field 'reference_index' must index the %d references (request_mode %s), got %r"
                             % (at, len(texts), "/".join(modes), index))
        found[(index, mode)] = _reference_logprob(state, texts[index], at)
    missing = [(k, m) for k in range(len(texts)) for m in modes if (k, m) not in found]
    if missing:
        raise UsageError("%s field 'reference_index': no %s request for reference %d"
                         % (where, missing[0][1], missing[0][0]))
    logprobs = [found[(k, "original")][0] for k in range(len(texts))]
    if len(modes) == 2:
        scores = [logprobs[k] - found[(k, "calibration")][0] for k in range(len(texts))]
    else:
        scores = [logprobs[k] / found[(k, "original")][1] for k in range(len(texts))]
    probs = _softmax(scores)
    best = [k for k, s in enumerate(scores) if s >= max(scores)]
    _check(logged, "exact_match", len(set(golds) & set(best)) / len(best), where, exact=True)
    _check(logged, "predicted_index", float(best[0]), where, exact=True)
    _check(logged, "max_prob", max(probs), where)
    answer = {"type": "choice", "choice": labels[best[0]], "probabilities": dict(zip(labels, probs)),
              "answer_confidence": max(probs), "scores": scores}
    if len(modes) == 2:
        answer["calibration_logprobs"] = [found[(k, "calibration")][0] for k in range(len(texts))]
    return raw, answer, {"logits": logprobs}
