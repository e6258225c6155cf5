"""The question body (spec S2.2) and each row's label in the JSON type S1.3 asks for, for convert.py.

choice: label text (ClassLabel indices as names, plain integers as decimal text), options given, else a
ClassLabel's names, else the distinct labels sorted. noul: true/false from booleans, 0/1 or one of two
label texts (false first). score: the number as it is, levels given, else a ClassLabel's names, else
"0".."k" up to the largest label. `m` is a convert.Mapping.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten

TYPES = ("choice", "noul", "score")
INSTRUCTIONS = {"choice": "Which {} fits the input?", "noul": "Is the input {}?",     # {}: the qid, _ as space
                "score": "Which {} level fits the input?"}


def question(m: Any, labels: List[Any], names: Optional[List[str]]) -> Tuple[Dict[str, Any], List[Any]]:
    """The question body (S2.2) and each row's label in its S1.3 JSON type."""
    default = INSTRUCTIONS[m.type].format((m.qid or m.label).replace("_", " "))
    body: Dict[str, Any] = {"type": m.type, "instructions": m.instructions or default}
    build = {"choice": _choice, "noul": _noul, "score": _score}[m.type]
    criteria, extra, expected = build(m, labels, names)
    if criteria is not None:
        body["criteria"] = criteria
    body.update(extra)
    return body, expected


def _bad(i: int, m: Any, value: Any, why: str) -> UsageError:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UsageError("row %d: column %r has no label (null)" % (i, m.label))
    return UsageError("row %d: column %r value %s %s" % (i, m.label, shorten(repr(value)), why))


def _option_list(m: Any) -> Optional[List[Any]]:
    if m.options is None:
        return None
    if isinstance(m.options, str) or not isinstance(m.options, (list, tuple, dict)) or not m.options:
        raise UsageError("options must be a non-empty list (or a dict label -> description), got %r"
                         % (shorten(repr(m.options)),))
    return list(m.options)


def _choice(m: Any, labels: List[Any], names: Optional[List[str]]):
    given = _option_list(m)
    if given is not None and not all(isinstance(o, str) for o in given):
        raise UsageError("choice options must be strings, got %s" % shorten(repr(given), 200))
    expected = []
    for i, v in enumerate(labels):
        if names and isinstance(v, int) and not isinstance(v, bool):
            if not 0 <= v < len(names):
                raise _bad(i, m, v, "is not a class of the ClassLabel feature (0..%d; -1 means no label)"
                           % (len(names) - 1))
            v = names[v]
        elif isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        elif not isinstance(v, str):
            raise _bad(i, m, v, "is not a choice label (a string, an integer or a ClassLabel class)")
        expected.append(v)
    if given is not None:
        options = given
    elif names:
        options = names
    else:
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in labels)
        options = [str(v) for v in sorted(set(labels))] if ints else sorted(set(expected))
    allowed = set(options)
    for i, v in enumerate(expected):
        if v not in allowed:
            raise _bad(i, m, v, "is not one of the options: %s" % shorten(", ".join(options), 200))
    criteria = dict(m.options) if isinstance(m.options, dict) else list(options)
    return criteria, {}, expected


def _noul(m: Any, labels: List[Any], names: Optional[List[str]]):
    texts = _option_list(m)
    if texts is None and names is not None:
        if len(names) != 2:
            raise UsageError("column %r has %d classes; a noul question needs two (false first) or "
                             "bool values" % (m.label, len(names)))
        texts = names
    if texts is not None and (len(texts) != 2 or not all(isinstance(t, str) and t.strip() for t in texts)
                              or texts[0].strip() == texts[1].strip()):
        raise UsageError("noul options must be two distinct non-empty label texts, false first, got %r"
                         % (texts,))
    expected = []
    for i, v in enumerate(labels):
        if isinstance(v, bool):
            expected.append(v)
        elif isinstance(v, int) and v in (0, 1):
            expected.append(v == 1)
        elif isinstance(v, str) and texts is not None and v in texts:
            expected.append(v == texts[1])
        else:
            raise _bad(i, m, v, "is not a noul label (true/false, 0/1%s)"
                       % (", %r/%r" % tuple(texts) if texts else ""))
    extra = {"labels": {"false": texts[0], "true": texts[1]}} if texts is not None else {}
    return None, extra, expected


def _score(m: Any, labels: List[Any], names: Optional[List[str]]):
    levels = _option_list(m) or names
    for i, v in enumerate(labels):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            raise _bad(i, m, v, "is not a score label (a finite number, the level index)")
        if v < 0 or (levels is not None and v > len(levels) - 1):
            raise _bad(i, m, v, "is outside the levels 0..%d" % (len(levels) - 1 if levels else 0))
    if levels is None:
        top = math.ceil(max(labels)) if labels else 0
        levels = [str(k) for k in range(int(top) + 1)]
    if isinstance(m.options, dict) or any(level is None for level in levels):
        raise UsageError("score options must be a list of level texts (level 0 first), got %r"
                         % (shorten(repr(m.options)),))
    return list(levels), {}, list(labels)
