"""The report JSON, streamed: the document without its cases is small (report.dumps); the `cases`
list is written batch by batch straight from sql/report/cases.sql, never held as Python dicts.

The bytes are exactly report.dumps(doc) of the full document (json.dumps with indent=2, sorted keys,
ensure_ascii=False; floats as Python's repr, NaN/Infinity as json writes them): each case is one
text rendered from the query's tuple with json's own string escaper, and a nested answer or label
is re-indented the way json.dumps would (tests/test_report_json.py compares both on edge values).
"""
from __future__ import annotations

import io
import json
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, TextIO

import duckdb

from . import report as R
from . import sql as sqlfiles

_STR: Callable[[str], str] = json.encoder.encode_basestring       # C escaper, as ensure_ascii=False uses
_FLOAT = float.__repr__
_INT = int.__repr__
BATCH = 8192                                                      # cases fetched and written at a time
CASE_PAD, FIELD_PAD = " " * 4, " " * 6                            # the cases list sits at level 1


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return _FLOAT(value)


def encode(value: Any, pad: str) -> str:
    """json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) as it reads with its first
    line at indentation `pad` (nested lines indented from there)."""
    kind = type(value)
    if kind is str:
        return _STR(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is float:
        return _float(value)
    if kind is int:
        return _INT(value)
    if kind is dict and all(type(k) is str for k in value):
        if not value:
            return "{}"
        inner = pad + "  "
        return "{\n%s\n%s}" % (",\n".join("%s%s: %s" % (inner, _STR(k), encode(v, inner))
                                          for k, v in sorted(value.items())), pad)
    if kind is list:
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n%s\n%s]" % (",\n".join(inner + encode(v, inner) for v in value), pad)
    # anything else (a subclass, a non-string key): json itself, re-indented
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True).replace("\n", "\n" + pad)


class _Texts:
    """JSON texts stored per case (language, model, expected) repeat: decode and render each once."""

    def __init__(self, pad: str, limit: int = 100000):
        self.pad, self.limit, self.seen = pad, limit, {}
        self.decode = json.JSONDecoder().decode

    def __call__(self, text: Optional[str]) -> str:
        if text is None:
            return "null"
        out = self.seen.get(text)
        if out is None:
            if len(self.seen) >= self.limit:
                self.seen.clear()
            out = self.seen[text] = encode(self.decode(text), self.pad)
        return out


def score_keys(score_within: Sequence[float]) -> List[tuple]:
    """(key, source) of a case's `scores` in json's sorted order; source is a column name or the index
    into the score_within list (a repeated tolerance: its last value, as dict.update keeps)."""
    sources: Dict[str, Any] = {"choice_accuracy": "ca", "noul_accuracy": "na", "score_mae": "mae",
                               "mean_confidence": "conf"}
    for i, t in enumerate(score_within):
        sources[R.score_within_key(t)] = i
    return sorted(sources.items())


def case_texts(result, score_within: Sequence[float]) -> Iterator[List[str]]:
    """Batches of rendered cases (each `    {...}` at list level 1) from a cases.sql result."""
    keys = score_keys(score_within)
    score_pad = FIELD_PAD + "  "
    names = ["%s%s: " % (score_pad, _STR(k)) for k, _ in keys]
    texts = _Texts(FIELD_PAD)
    decode = json.JSONDecoder().decode
    qids: Dict[str, str] = {}
    head = CASE_PAD + "{\n" + FIELD_PAD
    sep = ",\n" + FIELD_PAD
    while True:
        chunk = result.fetchmany(BATCH)
        if not chunk:
            return
        out = []
        for (qid, language, model, tags, expected, answer, conf, correct, ca, na, mae, within) in chunk:
            q = qids.get(qid)
            if q is None:
                q = qids[qid] = encode(qid, FIELD_PAD)
            row = {"ca": ca, "na": na, "mae": mae, "conf": conf}
            scores = ",\n".join(name + encode(row[src] if type(src) is str else within[src], score_pad)
                                for name, (_, src) in zip(names, keys))
            out.append("".join((
                head, '"answer": ', encode(decode(answer), FIELD_PAD),
                sep, '"confidence": ', encode(conf, FIELD_PAD),
                sep, '"correct": ', encode(correct, FIELD_PAD),
                sep, '"expected": ', texts(expected),
                sep, '"language": ', texts(language),
                sep, '"model": ', texts(model),
                sep, '"qid": ', q,
                sep, '"scores": {\n', scores, "\n", FIELD_PAD, "}",
                sep, '"tags": ', encode(list(tags or []), FIELD_PAD),
                "\n", CASE_PAD, "}")))
        if len(qids) > 100000:
            qids.clear()
        yield out


_HEAD = '{\n  "cases": []'


def write(out: TextIO, doc: Dict[str, Any], con: Optional[duckdb.DuckDBPyConnection] = None,
          run_id: Optional[str] = None, score_within: Sequence[float] = (),
          progress: Optional[Callable[[int, int], None]] = None) -> None:
    """Write report.dumps(doc) to `out`, the `cases` list streamed from `con` when one is given
    (doc["cases"] is then ignored; progress(done, total) after each batch); without `con`, the
    document's own cases."""
    if con is None:
        out.write(R.dumps(doc))
        return
    text = R.dumps(dict(doc, cases=[]))
    assert text.startswith(_HEAD), "the cases list is the document's first key"
    result = sqlfiles.query(con, "report/cases.sql",
                            {"run_id": run_id, "tolerances": [float(t) for t in score_within]})
    total, done = int(doc["extensions"]["run"].get("n_cases") or 0), 0
    out.write(_HEAD[:-1])
    first = True
    for batch in case_texts(result, score_within):
        out.write("\n" if first else ",\n")
        out.write(",\n".join(batch))
        first = False
        done += len(batch)
        if progress is not None:
            progress(done, max(total, done))
    out.write("]" if first else "\n  ]")
    out.write(text[len(_HEAD):])


def save(target: str, doc: Dict[str, Any], wh, run_id: str, score_within: Sequence[float], *,
         with_cases: bool = True, progress: Optional[Callable[[int, int], None]] = None) -> None:
    """Write the report JSON to the file `target`, or to stdout (UTF-8, one newline after) for "-";
    the cases streamed from the run's partition unless not `with_cases` (then `"cases": []`).
    `progress(done, total)` is called per batch of cases. Raises UsageError."""
    import sys

    from . import UsageError

    try:
        con = wh.connect([run_id]) if with_cases else None
        if target == "-":
            sys.stdout.flush()
            out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
            try:
                write(out, doc, con, run_id, score_within, progress)
                out.write("\n")
            finally:
                out.flush()
                out.detach()
        else:
            with open(target, "w", encoding="utf-8") as handle:
                write(handle, doc, con, run_id, score_within, progress)
    except OSError as exc:
        raise UsageError("cannot write report %r: %s" % (target, exc.strerror or exc)) from None
    except duckdb.Error as exc:
        raise UsageError("cannot read run %r: %s (see `laya-cases check`)"
                         % (run_id, str(exc).splitlines()[0])) from None
