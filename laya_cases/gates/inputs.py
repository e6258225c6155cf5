"""Gate inputs (S6.1, S6.2): NAME=VALUE flags, single limits, and the limits they assemble."""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

from laya_cases.core.errors import UsageError, shorten

DIMENSIONS = ("language", "model", "qid", "tag")
LIMITS = ("min", "max", "max_drop", "max_increase")
RELATIVE = ("max_drop", "max_increase")
#: laya-cases' policy extension: a relative rule with `"significant_at": ALPHA` fails only when the
#: drift exceeds its limit *and* the exact McNemar test on the slice's paired cases gives p < ALPHA.
SIGNIFICANT_AT = "significant_at"
#: extensions on a significant_at rule: `"adjust": "holm" | "bh"` reads the rule's McNemar p adjusted
#: over every significant_at rule of the policy; `"on_insufficient": "pass" | "fail"` turns on the
#: insufficient-evidence verdict (the rule's paired bootstrap interval reaches both -bound and +bound)
ADJUST, ADJUSTMENTS = "adjust", ("holm", "bh")
ON_INSUFFICIENT, INSUFFICIENT_CHOICES = "on_insufficient", ("pass", "fail")
#: the gate's paired bootstrap for on_insufficient rules: diff's defaults, fixed so a verdict is reproducible
EVIDENCE_BOOTSTRAP, EVIDENCE_SEED = 2000, 0


def finite_number(value: Any) -> bool:
    """An int or float (never a bool) that is finite, as the reference's policy checks read it."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def parse_pairs(pairs: Optional[Sequence[str]], flag: Optional[str] = None) -> Dict[str, float]:
    """S6.1: `NAME=VALUE` pairs (--min, --max, --tolerance); later duplicates win, keeping position.
    A name that is blank once trimmed (`" =0.5"`) names no metric, so it is refused like an empty one.
    An error starts with `flag: ` when one is given."""
    out: Dict[str, float] = {}
    lead = "%s: " % flag if flag else ""
    for pair in pairs or []:
        name, _, raw = pair.partition("=")
        if not name.strip() or not raw:
            raise UsageError("%sexpected NAME=VALUE, got %s" % (lead, shorten(repr(pair))))
        try:
            number = float(raw)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):          # a non-finite limit would disable the gate it names
            raise UsageError("%s%s is not a number in %s" % (lead, shorten(repr(raw), 40), shorten(repr(pair))))
        out[name.strip()] = number
    return out


def parse_limit(flag: str, raw: Optional[str]) -> Optional[float]:
    """--min-accuracy / --max-ece: one finite number (S6.1)."""
    if raw is None:
        return None
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise UsageError("%s: %s is not a number" % (flag, shorten(repr(raw))))
    return number


def assemble_limits(overall: Dict[str, Any], mins: Dict[str, float], maxs: Dict[str, float],
                    min_accuracy: Optional[float], max_ece: Optional[float]) -> Tuple[Dict[str, float], Dict[str, float]]:
    """S6.2: --min-accuracy names choice_accuracy when the report has it, else noul_accuracy."""
    mins, maxs = dict(mins), dict(maxs)
    if min_accuracy is not None:
        mins["choice_accuracy" if "choice_accuracy" in overall else "noul_accuracy"] = min_accuracy
    if max_ece is not None:
        maxs["ece"] = max_ece
    return mins, maxs
