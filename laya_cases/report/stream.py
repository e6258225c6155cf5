"""The report JSON, streamed: the document without its cases is small (report.dumps); the `cases`
list is written batch by batch straight from sql/report/case_texts.sql, never held as Python dicts.

The bytes are exactly report.dumps(doc) of the full document (json.dumps with indent=2, sorted keys,
ensure_ascii=False; floats as Python's repr, NaN/Infinity as json writes them): DuckDB writes each
case's text after its answer (numbers as CAST(DOUBLE AS VARCHAR), which is repr's text; the qids, tag
lists and expected/language/model texts rendered here once per distinct value and joined in), and the
answer is re-indented here the way json.dumps would (tests/report/test_report_json.py compares both on edge
values; docs/cli_speed.md).
"""
from __future__ import annotations

import functools
import io
import json
import os
import re
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, TextIO

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.report.answer_helper import Helper
from laya_cases.query import sql as sqlfiles
from laya_cases.query.sql import connect

_STR: Callable[[str], str] = json.encoder.encode_basestring       # C escaper, as ensure_ascii=False uses
_FLOAT = float.__repr__
_INT = int.__repr__
BATCH = 8192                                                      # cases fetched and written at a time
#: DuckDB's memory for streaming the cases (sorted into case order, each case's text but its answer built by
#: DuckDB: 2M cases hold ~1.2 GB) unless $LAYA_CASES_MEMORY_LIMIT is set; beyond it the sort spills to disk
#: ($LAYA_CASES_TEMP_DIR), which costs ~10% time.
STREAM_MEMORY = "512MB"
CASE_PAD, FIELD_PAD = " " * 4, " " * 6                            # the cases list sits at level 1


_SPECIAL = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _float(value: float) -> str:
    text = _FLOAT(value)
    return _SPECIAL.get(text, text)


#: scalar type -> its JSON text, exactly as json.dumps writes it
_SCALAR: Dict[type, Callable[[Any], str]] = {str: _STR, float: _float, int: _INT, type(None): lambda v: "null",
                                             bool: lambda v: "true" if v else "false"}
_NESTED = (dict, list)


def _refuse(value: Any) -> Any:
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


@functools.lru_cache(maxsize=64)
def _flat(pad: str) -> Callable[[Any], str]:
    """json's C encoder (sorted keys, ensure_ascii=False) writing a container's items one per line at `pad`
    + 2, its nested containers on that same indentation: the C function itself, without the per-call
    set-up of JSONEncoder.encode (most of the cost of encoding one small answer)."""
    sep = ",\n" + pad + "  "
    make = json.encoder.c_make_encoder
    if make is None:                                     # an interpreter without json's C accelerator
        return json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(sep, ": ")).encode
    encoder = make(None, _refuse, _STR, None, ": ", sep, True, False, True)
    return lambda value: "".join(encoder(value, 0))


def encode(value: Any, pad: str) -> str:
    """json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) as it reads with its first
    line at indentation `pad` (nested lines indented from there). Object keys are strings (JSON's)."""
    scalar = _SCALAR.get(type(value))
    if scalar is not None:
        return scalar(value)
    kind = type(value)
    if kind is dict or kind is list:
        if not value:
            return "{}" if kind is dict else "[]"
        text = _two_levels(value, kind, pad)
        if text is not None:
            return text
        inner = pad + "  "
        parts = []                       # scalars inline: one call per nested container only
        if kind is dict:
            for k in sorted(value):
                v = value[k]
                scalar = _SCALAR.get(type(v))
                parts.append("%s: %s" % (_STR(k), scalar(v) if scalar is not None else encode(v, inner)))
        else:
            for v in value:
                scalar = _SCALAR.get(type(v))
                parts.append(scalar(v) if scalar is not None else encode(v, inner))
        return "%s\n%s%s\n%s%s" % ("{" if kind is dict else "[", inner, (",\n" + inner).join(parts), pad,
                                   "}" if kind is dict else "]")
    # anything else (a subclass of a JSON type): json itself, re-indented
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True).replace("\n", "\n" + pad)


def _two_levels(value: Any, kind: type, pad: str) -> Optional[str]:
    """The C encoder's text of a non-empty container of scalars and of containers of scalars (an answer
    with its probabilities), or None for any other. One C call writes every item at `pad` + 2; a nested
    container comes out on that same indentation, and is replaced by its own rendering. The replaced text
    W (the nested container as that call writes it) cannot occur but as that container: the encoder
    escapes every quote and newline inside a string, and W holds an unescaped quote or a newline
    (otherwise: None, the general path)."""
    flat = _flat(pad)
    text = flat(value)
    if "{" not in text[1:] and "[" not in text[1:]:        # no nested container (a bracket in a string: the loop)
        return "%s\n%s  %s\n%s%s" % (text[0], pad, text[1:-1], pad, text[-1])
    sep = ",\n" + pad + "  "
    for v in (value.values() if kind is dict else value):
        nested = type(v)
        if nested is dict or nested is list:
            if not v:
                continue
            for x in (v.values() if nested is dict else v):
                if type(x) in _NESTED:
                    return None
            wrong = flat(v)
            if "\n" not in wrong and '"' not in wrong:
                return None
            text = text.replace(wrong, "%s\n%s    %s\n%s  %s" % (wrong[0], pad, wrong[1:-1].replace(sep, sep + "  "),
                                                                pad, wrong[-1]))
        elif nested not in _SCALAR:
            return None
    return "%s\n%s  %s\n%s%s" % (text[0], pad, text[1:-1], pad, text[-1])


class _Texts:
    """JSON texts stored per case (language, model, expected) repeat: decode and render each once."""

    def __init__(self, pad: str, limit: int = 100000):
        self.pad, self.limit, self.seen = pad, limit, {}
        decoder = json.JSONDecoder()
        self.decode, self.scan = decoder.decode, json.scanner.make_scanner(decoder)

    def __call__(self, text: Optional[str]) -> str:
        if text is None:
            return "null"
        out = self.seen.get(text)
        if out is None:
            if len(self.seen) >= self.limit:
                self.seen.clear()
            try:                         # json.loads without its two Python wrappers, for a text with no padding
                value, end = self.scan(text, 0)
                if end != len(text):
                    value = self.decode(text)
            except StopIteration:        # leading whitespace, or not JSON (then decode raises as before)
                value = self.decode(text)
            out = self.seen[text] = encode(value, self.pad)
        return out


def score_keys(score_within: Sequence[float]) -> List[tuple]:
    """(key, source) of a case's `scores` in json's sorted order; source indexes (choice_accuracy,
    noul_accuracy, score_mae, mean_confidence, *score_within values); a repeated tolerance: its last
    value, as dict.update keeps."""
    sources: Dict[str, int] = {"choice_accuracy": 0, "noul_accuracy": 1, "score_mae": 2, "mean_confidence": 3}
    for i, t in enumerate(score_within):
        sources[R.score_within_key(t)] = 4 + i
    return sorted(sources.items())


def _pieces(keys: List[tuple]) -> List[str]:
    """One case's text between its fields: before the answer, then after each of answer, confidence,
    correct, expected, language, model, qid, the scores in `keys` order, and the tags."""
    fields = ["confidence", "correct", "expected", "language", "model", "qid"]
    pieces = ['%s{\n%s"answer": ' % (CASE_PAD, FIELD_PAD)]
    pieces += [',\n%s"%s": ' % (FIELD_PAD, name) for name in fields]
    pieces.append(',\n%s"scores": {\n%s  %s: ' % (FIELD_PAD, FIELD_PAD, _STR(keys[0][0])))
    pieces += [',\n%s  %s: ' % (FIELD_PAD, _STR(k)) for k, _ in keys[1:]]
    pieces.append('\n%s},\n%s"tags": ' % (FIELD_PAD, FIELD_PAD))
    pieces.append("\n%s}" % CASE_PAD)
    return pieces


def tolerances_in_key_order(score_within: Sequence[float]) -> List[float]:
    """The tolerances case_texts.sql takes: one per score_within key, in the order the case's `scores` sort
    (after choice_accuracy, mean_confidence, noul_accuracy and score_mae, whose order it hardcodes)."""
    keys = score_keys(score_within)
    assert [source for _, source in keys[:4]] == [0, 3, 1, 2], keys
    return [float(score_within[source - 4]) for _, source in keys[4:]]


def case_values(con: duckdb.DuckDBPyConnection, run_id: str) -> List[Dict[str, str]]:
    """The run's distinct qids, tag lists, expected, language and model texts, each rendered once as it
    reads in a case ({kind, key, text}: case_texts.sql joins them by key)."""
    qids, tag_lists, expecteds, languages, models = sqlfiles.query(
        con, "report/case_values.sql", {"run_id": run_id}).fetchone()
    texts = _Texts(FIELD_PAD)
    values = [{"kind": "qid", "key": q, "text": encode(q, FIELD_PAD)} for q in qids or ()]
    values += [{"kind": "tags", "key": t, "text": encode(json.loads(t), FIELD_PAD)} for t in tag_lists or ()]
    for kind, keys in (("expected", expecteds), ("language", languages), ("model", models)):
        values += [{"kind": kind, "key": k, "text": texts(k)} for k in keys or ()]
    return values


def answer_texts() -> "_Texts":
    """The renderer of answers at the case's field level; repeated answers (rounded confidences) are
    rendered once."""
    return _Texts(FIELD_PAD, limit=20000)


def render_batch(answers: "_Texts", first: str, texts: List[Optional[str]], rests: List[str]) -> str:
    """One batch of cases as its text in the list (cases joined by ",\n"): each answer rendered between
    `first` and the case's rest as DuckDB wrote it."""
    return ",\n".join([first + answers(text) + rest for text, rest in zip(texts, rests)])


#: from this many cases on, a helper process renders every other batch (the rendering is Python, one
#: core's worth; the output does not change)
HELPER_FROM = 200000


def _helper(n_cases: int):
    """The rendering helper process (laya_cases/report/answer_helper.py), or None (a small run, one core, or a
    program whose sys.executable is not a Python interpreter to start it with)."""
    import sys

    if (n_cases < HELPER_FROM or (os.cpu_count() or 1) < 2
            or "python" not in os.path.basename(sys.executable or "").lower()):    # embedded: no interpreter
        return None
    try:
        return Helper()
    except OSError:
        return None


_TAGS = ',\n%s"tags": ' % FIELD_PAD          # the tags piece (_pieces); a tag list's items sit deeper
_END = "\n%s}" % CASE_PAD


def with_fields(rest: str, fields: Optional[str]) -> str:
    """A case's text after its answer with its own further fields (a JSON object text, or None) at their
    sorted places: keys before `tags` ahead of the tags piece, the others after the tags."""
    if fields is None:
        return rest
    value = json.loads(fields)
    at = rest.rindex(_TAGS)

    def items(keys: List[str]) -> str:
        return "".join(",\n%s%s: %s" % (FIELD_PAD, _STR(k), encode(value[k], FIELD_PAD)) for k in keys)

    keys = sorted(value)
    assert all(k > "scores" for k in keys), keys      # never one of the reference's own case keys
    return (rest[:at] + items([k for k in keys if k < "tags"]) + rest[at:-len(_END)]
            + items([k for k in keys if k > "tags"]) + _END)


def case_texts(result, first: str, n_cases: int = 0) -> Iterator[tuple]:
    """The `cases` list's batches, in order, from a report/case_texts.sql result: (number of cases, text)
    with the text of up to BATCH cases (`    {...}` at list level 1, joined by ",\n"), as str or as UTF-8
    bytes. A case is `first` (the text before the answer), the answer re-rendered here, then the rest as
    DuckDB wrote it. A run of `HELPER_FROM` cases or more has every other batch rendered by a helper
    process (as bytes) while this one renders the batch before it (docs/cli_speed.md: sending it more
    batches ahead, or a larger share, was measured no faster)."""
    helper, answers = _helper(n_cases), answer_texts()

    def fetch() -> List[tuple]:
        return [(answer, with_fields(rest, fields)) for answer, rest, fields in result.fetchmany(BATCH)]

    try:
        while True:
            rows = fetch()
            if not rows:
                return
            later = fetch() if helper is not None else None
            if later:
                helper.submit(first, [answer for answer, _ in later], [rest for _, rest in later])
            yield len(rows), render_batch(answers, first, [answer for answer, _ in rows], [rest for _, rest in rows])
            if later:
                text = helper.result()          # None: the helper failed; rendered here (and raises as alone)
                yield len(later), text if text is not None else render_batch(
                    answers, first, [answer for answer, _ in later], [rest for _, rest in later])
    finally:
        if helper is not None:
            helper.close()


_HEAD = '{\n  "cases": []'
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN')      # a string literal, or a non-finite number


def strict(text: str) -> str:
    """`text` (whole JSON tokens) with NaN, Infinity and -Infinity written as null (RFC 8259 has no
    such numbers: JavaScript's JSON.parse and most tools refuse them); strings are left as they are."""
    if "NaN" not in text and "Infinity" not in text:
        return text
    return _TOKENS.sub(lambda m: m.group() if m.group()[0] == '"' else "null", text)


class _Strict:
    """A text stream that writes through strict(); each write is whole tokens (the writer's pieces)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> None:
        self._out.write(strict(text))

    def flush(self) -> None:
        self._out.flush()


def write(out: TextIO, doc: Dict[str, Any], con: Optional[duckdb.DuckDBPyConnection] = None,
          run_id: Optional[str] = None, score_within: Sequence[float] = (),
          progress: Optional[Callable[[int, int], None]] = None, raw: Optional[BinaryIO] = None,
          strict_json: bool = False) -> None:
    """Write report.dumps(doc) to `out`, the `cases` list streamed from `con` when one is given
    (doc["cases"] is then ignored; progress(done, total) after each batch); without `con`, the
    document's own cases. `raw`: the binary stream under `out` when `out` writes UTF-8 with no newline
    translation, so that batches the helper rendered as bytes go there as they are. `strict_json`:
    null for every non-finite number (the default keeps the reference's NaN/Infinity tokens)."""
    if strict_json:
        out, raw = _Strict(out), None     # type: ignore[assignment]
    if con is None:
        out.write(R.dumps(doc))
        return
    text = R.dumps(dict(doc, cases=[]))
    assert text.startswith(_HEAD), "the cases list is the document's first key"
    pieces = _pieces(score_keys(score_within))
    R.case_fields(con, run_id)
    result = sqlfiles.query(con, "report/case_texts.sql", {
        "run_id": run_id, "tolerances": tolerances_in_key_order(score_within), "pieces": pieces,
        "values": case_values(con, run_id)})
    total, done = int(doc["extensions"]["run"].get("n_cases") or 0), 0
    out.write(_HEAD[:-1])
    first = True
    for n, batch in case_texts(result, pieces[0], total):
        out.write("\n" if first else ",\n")
        if isinstance(batch, bytes):
            if raw is not None:
                out.flush()
                raw.write(batch)
            else:
                out.write(batch.decode("utf-8"))
        else:
            out.write(batch)
        first = False
        done += n
        if progress is not None:
            progress(done, max(total, done))
    out.write("]" if first else "\n  ]")
    out.write(text[len(_HEAD):])


def save(target: str, doc: Dict[str, Any], wh, run_id: str, score_within: Sequence[float], *,
         with_cases: bool = True, progress: Optional[Callable[[int, int], None]] = None,
         strict_json: bool = False, con: Optional[duckdb.DuckDBPyConnection] = None) -> None:
    """Write the report JSON to the file `target`, or to stdout (UTF-8, one newline after) for "-";
    the cases streamed from the run's partition (through `con`, a report session's, else a connection
    of its own) unless not `with_cases` (then `"cases": []`). `progress(done, total)` is called per
    batch of cases. Raises UsageError."""
    import sys

    try:
        con = (con if con is not None else connect(wh, [run_id])) if with_cases else None
        if con is not None and not os.environ.get(sqlfiles.MEMORY_ENV):
            con.execute("SET memory_limit = '%s'" % STREAM_MEMORY)     # the sort spills; RSS stays small
        if target == "-":
            sys.stdout.flush()
            out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
            try:
                write(out, doc, con, run_id, score_within, progress, raw=sys.stdout.buffer, strict_json=strict_json)
                out.write("\n")
            finally:
                out.flush()
                out.detach()
        else:
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                write(handle, doc, con, run_id, score_within, progress, raw=handle.buffer, strict_json=strict_json)
    except OSError as exc:
        raise UsageError("cannot write report %r: %s" % (target, exc.strerror or exc)) from None
    except duckdb.Error as exc:
        raise UsageError("cannot read run %r: %s (see `laya-cases check`)"
                         % (run_id, str(exc).splitlines()[0])) from None
