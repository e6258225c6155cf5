"""JSON text a user wrote (dataset lines, policies, baselines), parsed with one extra refusal.

Python refuses to read an integer longer than its int-string limit (4300 digits) and says to raise
the limit; for a user's file that is bad input, so the error names the field that holds it.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Iterator, Tuple

from laya_cases.core.errors import shorten


NOT_UNICODE = "contains a lone surrogate escape (\\ud800-\\udfff): not valid Unicode text"


class TooManyDigits(ValueError):
    """An integer beyond Python's int-string limit; the message names its field."""


class _Digits:
    def __init__(self, text: str):
        self.count = len(text.lstrip("-"))


def _int_or_marker(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return _Digits(text)


def loads(text: str) -> Any:
    """json.loads (NaN and Infinity tokens accepted); raises TooManyDigits or ValueError."""
    try:
        return json.loads(text)
    except ValueError as exc:
        if "Exceeds the limit" not in str(exc):
            raise
    # only on that failure: parse again with a marker for each too-long integer, to name its field
    for field, marker in _markers(json.loads(text, parse_int=_int_or_marker), ""):
        raise TooManyDigits("%s is an integer of %d digits; at most %d are read"
                            % (shorten(field) if field else "the value", marker.count, sys.get_int_max_str_digits()))
    raise AssertionError("unreachable: the limit was exceeded, so a marker exists")


def check_unicode(value: Any) -> None:
    """JSON "\\ud800" parses, but no UTF-8 file or Arrow string can hold it: ValueError(NOT_UNICODE)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(NOT_UNICODE) from None


def _markers(value: Any, field: str) -> Iterator[Tuple[str, _Digits]]:
    if isinstance(value, _Digits):
        yield field, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _markers(item, "%s[%r]" % (field, key) if field else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _markers(item, "%s[%d]" % (field, index))
