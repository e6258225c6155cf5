"""Labelled dataset reading and validation (spec S1).

A dataset is UTF-8 JSON Lines read with universal newlines; blank lines and lines starting with
`#` (after trimming) are skipped but still counted, so messages name physical lines (S1.1).
The structural checks run in the reference's order and the first failure wins (S1.4).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.core import bundled, jsontext
from laya_cases.core.errors import shorten


@dataclass
class Row:
    """One dataset line: a state with its questions and labels."""

    index: int                      # 0-based position among kept rows
    line_no: int                    # 1-based physical line
    raw: Dict[str, Any]             # the parsed object, unmodified
    tags: Tuple[str, ...] = field(default=())

    @property
    def state(self) -> Any:
        return self.raw["state"]

    @property
    def questions(self) -> Dict[str, Any]:
        return self.raw["questions"]

    @property
    def expected(self) -> Dict[str, Any]:
        return self.raw["expected"]

    @property
    def language(self) -> Any:
        return self.raw.get("language")

    @property
    def model(self) -> Any:
        return self.raw.get("model")


def iter_lines(path: str) -> Iterator[Tuple[int, Any]]:
    """Yield (line_no, parsed JSON) for every non-blank, non-comment line (S1.1, S1.4 #1-#2)."""
    try:
        with open(path, "r", encoding="utf-8") as handle:      # newline=None: LF, CRLF and CR
            for line_no, line in enumerate(handle, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    value = jsontext.loads(line)                 # accepts NaN / Infinity tokens
                except jsontext.TooManyDigits as exc:
                    raise UsageError("%s:%d %s" % (path, line_no, exc)) from None
                except ValueError as exc:
                    raise UsageError("%s:%d is not valid JSON: %s" % (path, line_no, exc)) from None
                yield line_no, value
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        hint = bundled.hint(path) if isinstance(exc, FileNotFoundError) else None
        raise UsageError("%s cannot be read: %s%s" % (path, exc, "; " + hint if hint else "")) from None


def check_row(value: Any, where: str) -> Tuple[str, ...]:
    """The S1.4 structural checks #3-#8 on one parsed line; returns the tags as text."""
    if not isinstance(value, dict):
        raise UsageError("%s must be an object, got %s" % (where, type(value).__name__))
    for key in ("state", "questions", "expected"):
        if key not in value:
            raise UsageError("%s is missing %r" % (where, key))
    if not isinstance(value["questions"], dict):
        raise UsageError("%s 'questions' must be an object" % where)
    if not isinstance(value["expected"], dict):
        raise UsageError("%s 'expected' must be an object keyed by question id" % where)
    unknown = sorted(set(value["expected"]) - set(value["questions"]))
    if unknown:
        raise UsageError("%s 'expected' names unknown question(s): %s" % (where, shorten(", ".join(unknown), 200)))
    tags = value.get("tags") or ()
    if not isinstance(tags, (list, tuple)):
        raise UsageError("%s 'tags' must be a list" % where)
    return tuple(str(t) for t in tags)                           # S1.2: Python str() of each


def iter_rows(path: str) -> Iterator[Row]:
    """Stream validated rows; raises UsageError naming path:line on the first bad one."""
    index = 0
    for line_no, value in iter_lines(path):
        tags = check_row(value, "%s:%d" % (path, line_no))
        yield Row(index=index, line_no=line_no, raw=value, tags=tags)
        index += 1
    if index == 0:
        raise UsageError("%s contains no examples" % path)


def load(path: str) -> List[Row]:
    return list(iter_rows(path))


def summary_line(rows: List[Row]) -> str:
    """The S1.6 `validate` line: `<rows> examples, <q> question id(s): <ids>`."""
    qids = sorted({qid for row in rows for qid in row.questions})
    return "%d examples, %d question id(s): %s" % (len(rows), len(qids), ", ".join(qids))


def slice_key(value: Any) -> Optional[str]:
    """S4.1: the group key of a language/model value is Python str(); null is in no group."""
    return None if value is None else str(value)
