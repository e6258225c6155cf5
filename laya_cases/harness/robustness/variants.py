"""Metamorphic variants of a choice case (S7.13) and how an answer is read back (S7.14).

Per language a fresh `random.Random(seed)`; per case, in the language's row order, s = getrandbits(64).
option_order shows canonical option order[j] at slot j, order = [0..n-1] shuffled by `random.Random(s)`
(a one-slot rotation when the shuffle is the identity); label_rename keeps the canonical order (the
baseline's: it isolates the label from the position) and renames the key of canonical option i to `A`,
`B`, ... (n <= 26) or `key_i` (n > 26, every key). Descriptions travel with their option. An answer to a presented question is mapped back to canonical order: the vector must be
finite, each p in [0, 1] and sum to 1 within 1e-6 (else the case is an error record).
"""
from __future__ import annotations

import math
import random
import string
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

KINDS = ("baseline", "option_order", "label_rename")
VARIANT_KINDS = KINDS[1:]
SEED = 13
SUM_TOLERANCE = 1e-6
#: Answers in the reference shape carry probabilities rounded to this many decimals (S2.4); for such a
#: vector the sum may miss 1 by up to n * 0.5e-4 (see widened_tolerance).
ANSWER_DIGITS = 4


class NotADistribution(ValueError):
    """S7.14: a returned vector that cannot be canonicalised (the case becomes an error record)."""


def option_order(s: int, n: int) -> List[int]:
    """The presented order for one case: order[j] = canonical index shown at slot j (S7.13, T7.3)."""
    order = list(range(n))
    random.Random(s).shuffle(order)
    if order == list(range(n)):
        order = order[1:] + order[:1]
    return order


def case_seeds(seed: int, count: int) -> List[int]:
    """The per-case draws s of one language's cases, in order (a fresh random.Random(seed))."""
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(count)]


def renamed_keys(n: int) -> List[str]:
    """label_rename keys by canonical position: A, B, ... for n <= 26, key_0 .. key_{n-1} otherwise."""
    if n <= 26:
        return list(string.ascii_uppercase[:n])
    return ["key_%d" % i for i in range(n)]


@dataclass(frozen=True)
class Variant:
    """One presentation of a case: slot j shows canonical option slot_order[j] under presented_labels[i]."""

    kind: str
    slot_order: List[int]             # canonical index per presented slot
    presented_labels: List[str]       # the key shown for each canonical option (aligned with `options`)

    def body(self, canonical: Dict[str, Any]) -> Dict[str, Any]:
        """The presented question: the canonical body with its criteria reordered and relabelled."""
        items = list(canonical["criteria"].items())
        criteria = {self.presented_labels[i]: items[i][1] for i in self.slot_order}
        return dict(canonical, criteria=criteria)


def variants(keys: Sequence[str], s: int) -> List[Variant]:
    """baseline, option_order and label_rename of a case whose canonical keys are `keys`."""
    n = len(keys)
    order = option_order(s, n)
    return [Variant("baseline", list(range(n)), list(keys)),
            Variant("option_order", order, list(keys)),
            Variant("label_rename", list(range(n)), renamed_keys(n))]


def widened_tolerance(values: Sequence[float]) -> float:
    """1e-6 (S7.14); n * 0.5e-4 + 1e-6 when every value is already rounded to ANSWER_DIGITS decimals,
    the rounding the reference-shaped answers apply (their sum can miss 1 by that much)."""
    if all(round(v, ANSWER_DIGITS) == v for v in values):
        return len(values) * 0.5 * 10.0 ** -ANSWER_DIGITS + SUM_TOLERANCE
    return SUM_TOLERANCE


def canonical_vector(answer: Any, variant: Variant) -> List[float]:
    """The answer's probabilities in canonical order (S7.14); raises NotADistribution."""
    probs = answer.get("probabilities") if isinstance(answer, dict) else None
    if not isinstance(probs, dict):
        raise NotADistribution("the answer has no probabilities object")
    n = len(variant.slot_order)
    canon: List[Optional[float]] = [None] * n
    for j, i in enumerate(variant.slot_order):
        key = variant.presented_labels[i]
        value = probs.get(key)
        if type(value) not in (int, float):
            raise NotADistribution("probability of %r is %s" % (key, "missing" if value is None else repr(value)))
        value = float(value)
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise NotADistribution("probability of %r is %r, not a finite value in [0, 1]" % (key, value))
        canon[i] = value
    if len(probs) != n:
        raise NotADistribution("the answer has %d probabilities for %d options" % (len(probs), n))
    total = math.fsum(canon)            # type: ignore[arg-type]
    if abs(total - 1.0) > widened_tolerance(canon):      # type: ignore[arg-type]
        raise NotADistribution("probabilities sum to %r, not 1" % total)
    return canon                        # type: ignore[return-value]


def canonical_answer(answer: Dict[str, Any], variant: Variant, keys: Sequence[str]) -> Dict[str, Any]:
    """The answer as the canonical question would read it: choice = the first canonical argmax,
    probabilities keyed by the canonical keys, answer_confidence = max p (S7.14)."""
    canon = canonical_vector(answer, variant)
    best = max(range(len(canon)), key=lambda i: (canon[i], -i))
    out = {"type": "choice", "choice": keys[best], "probabilities": dict(zip(keys, canon)),
           "answer_confidence": canon[best]}
    if type(answer.get("confidence")) in (int, float):
        out["confidence"] = answer["confidence"]       # entropy confidence: the same in every order
    return out


def canonical_logits(logits: Any, variant: Variant) -> Optional[List[float]]:
    """Presented-order logits (a runner fact) in canonical order; None unless one per option."""
    n = len(variant.slot_order)
    if not isinstance(logits, list) or len(logits) != n or not all(type(x) in (int, float) for x in logits):
        return None
    canon = [0.0] * n
    for j, i in enumerate(variant.slot_order):
        canon[i] = float(logits[j])
    return canon
