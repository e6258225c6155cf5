"""Every value a URL can carry, checked before it reaches a query: closed sets (run ids, slice keys,
dimensions, outcomes) are looked up, numbers are parsed and bounded, and anything else is a
BadRequest (a 400 page). The checked values are then bound as SQL parameters, never spliced."""
from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Tuple

from laya_cases.store.layout import is_run_id

MAX_TEXT = 512
MAX_INT = 2 ** 63 - 1
PAGE_SIZES = (1, 500)
DEFAULT_PAGE = 50
OUTCOMES = ("correct", "incorrect", "unscored")
SORTS = ("row", "confidence", "predicted", "qid", "language")     # the cases page's orders (sql/serve/cases_page.sql)
MAX_OFFSET = 10_000_000


class BadRequest(Exception):
    """A URL value that is not acceptable: the message is shown on the 400 page (escaped)."""


def single(items: Iterable[Tuple[str, str]], allowed: Iterable[str]) -> Dict[str, str]:
    """The query string as {name: value}: unknown names, repeated names and bad text are refused;
    empty values count as absent (a submitted form sends every field)."""
    allowed = set(allowed)
    out: Dict[str, str] = {}
    for name, value in items:
        if name not in allowed:
            raise BadRequest("unknown parameter %r (this page takes: %s)" % (name[:40], ", ".join(sorted(allowed))))
        if name in out:
            raise BadRequest("parameter %r given more than once" % name)
        out[name] = text(value, name)
    return {k: v for k, v in out.items() if v != ""}


def text(value: str, name: str) -> str:
    if len(value) > MAX_TEXT:
        raise BadRequest("%s is longer than %d characters" % (name, MAX_TEXT))
    if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or c in "\ufffe\uffff\ufffd" or 0xD800 <= ord(c) <= 0xDFFF
           for c in value):
        raise BadRequest("%s holds a control character or an undecodable byte" % name)
    return value


def one_of(value: Optional[str], name: str, allowed: Iterable[str]) -> Optional[str]:
    if value is None:
        return None
    if value not in set(allowed):
        raise BadRequest("%s %r is not one of the values this run has" % (name, value[:80]))
    return value


def integer(value: Optional[str], name: str, lo: int = 0, hi: int = MAX_INT) -> Optional[int]:
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 19:
        raise BadRequest("%s must be a whole number in [%d, %d]" % (name, lo, hi))
    number = int(value)
    if not lo <= number <= hi:
        raise BadRequest("%s must be a whole number in [%d, %d]" % (name, lo, hi))
    return number


def unit(value: Optional[str], name: str) -> Optional[float]:
    """A number in [0, 1] (a confidence bound)."""
    if value is None:
        return None
    try:
        number = float(value) if value.isascii() and len(value) <= 40 else math.nan
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise BadRequest("%s must be a number in [0, 1]" % name)
    return number


def run_id(value: str, known: List[str]) -> str:
    text(value, "run")
    if not is_run_id(value):
        raise BadRequest("%r is not a run id" % value[:80])
    if value not in known:
        raise BadRequest("no committed run %r in this warehouse" % value)
    return value
