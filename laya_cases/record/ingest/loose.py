"""Answers lines in any spelling, read column-wise: the path of `ingest` for what the templates do not read.

The templates (record/ingest/template.py, record/ingest/cases.py) read lines exactly as json.dumps writes
them. A file from another writer (keys in other orders, other spacing, floats in exponent form, compact
separators, ASCII escapes) is read here: DuckDB parses each line once and sql/ingest/answers_loose.sql turns
it into decision rows as the per-row path would. Every stored JSON text is rebuilt from DuckDB's minified
text of the value (same key order, same duplicates, same numbers): with json.dumps's separators where that is
exact, else by Python from that small text (the functions below, cached per distinct text). A line the query
cannot read as the per-row path does (out of its scope, or not JSON) is left to the per-row path, which also
names its error.
"""
from __future__ import annotations

import json
import random
import threading
from importlib import resources
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.core import identity as I
from laya_cases.record.decisions import _json, body_facts
from laya_cases.record.ingest.ids import digests, to_hex, DIGEST
from laya_cases.record.ingest.template import PROBES, mask, writes_repr
from laya_cases.store.schema import DECISION_SCHEMA

_S = pa.string()
_TEXTS = pa.struct([("canonical", _S), ("compact", _S)])
_BODY = pa.struct([("id", pa.int32()), ("options", pa.list_(_S))])
_TRAILING_COMMA = r",[ \t]*[\]}]"        # DuckDB reads `[1,]`; json.loads refuses it
CACHE = 4096                             # distinct texts each Python function remembers


def _sql(name: str) -> str:
    """sql/ingest/<name>.sql (read here: the query wing, laya_cases/query, sits beside this one)."""
    return resources.files("laya_cases_sql").joinpath("ingest", name + ".sql").read_text(encoding="utf-8")


def _cached(convert: Callable[[str], Any], kind: pa.DataType) -> Callable[[Any], pa.Array]:
    """A DuckDB Arrow function applying `convert` once per distinct text of each batch (and across
    batches, up to CACHE texts); None (null) for a text it cannot convert: that line goes row by row."""
    memo: Dict[str, Any] = {}

    def run(texts: Any) -> pa.Array:
        texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
        encoded = pc.dictionary_encode(texts)
        values = []
        for text in encoded.dictionary.to_pylist():
            value = memo.get(text, memo)             # (DuckDB may call from two threads: no lookup after a clear)
            if value is memo:
                try:
                    value = convert(text)
                except (ValueError, RecursionError, TypeError, UnicodeEncodeError):
                    value = None
                if len(memo) >= CACHE:
                    memo.clear()
                memo[text] = value
            values.append(value)
        return pa.array(values, kind).take(encoded.indices)
    return run


def _texts(text: str) -> Dict[str, str]:
    value = json.loads(text)
    return {"canonical": _json(value), "compact": I._compact(value)}  # noqa: SLF001


class _Bodies:
    """The question bodies one block's query met, numbered (lc_body_facts; DuckDB may call it from two threads)."""

    def __init__(self) -> None:
        self.ids: Dict[str, int] = {}
        self.facts: List[tuple] = []         # (body JSON, options, option texts, instructions, question type)
        self.lock = threading.Lock()

    def __call__(self, texts: Any) -> pa.Array:
        texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
        encoded = pc.dictionary_encode(texts)
        values = [self._id(text) for text in encoded.dictionary.to_pylist()]
        return pa.array(values, _BODY).take(encoded.indices)

    def _id(self, text: str) -> Optional[Dict[str, Any]]:
        with self.lock:
            if text not in self.ids:
                try:
                    raw = json.loads(text)
                except (ValueError, RecursionError):
                    return None                  # never: DuckDB wrote the text (its line then goes row by row)
                facts = body_facts(raw)
                self.ids[text] = len(self.facts)
                self.facts.append((_json(raw),) + tuple(facts))
            number = self.ids[text]
            return {"id": number, "options": list(self.facts[number][1])}

    def columns(self, body_id: pa.Array) -> Dict[str, pa.Array]:
        """question_type, instructions, options and option_texts of each case, by its body's number."""
        _body, options, texts, instructions, kinds = zip(*self.facts) if self.facts else ((),) * 5
        return {"question_type": pa.array(kinds, _S).take(body_id), "instructions": pa.array(instructions, _S).take(body_id),
                "options": pa.array([list(o) for o in options], pa.list_(_S)).take(body_id),
                "option_texts": pa.array([list(t) for t in texts], pa.list_(_S)).take(body_id)}


#: the columns a line holds once, on its first case (sql/ingest/answers_loose.sql)
LINE_COLUMNS = ("language", "language_key", "model", "model_key", "tags", "item_id", "source_item_id", "call_ms")


class Loose:
    """What the reader read of a block: its lines (positions), cases per line, their labelled lines
    (compact text and LF, for the run's digest) and decision columns (`table` adds line_no and row_index)."""

    def __init__(self, lines: np.ndarray, counts: np.ndarray, compact: pa.Array, columns: Dict[str, Any],
                 case_lines: np.ndarray, questions: Dict[str, Any]):
        self.lines, self.counts, self.compact, self.columns, self.case_lines = lines, counts, compact, columns, case_lines
        self.questions = questions

    def table(self, first: int, row_index: np.ndarray) -> pa.Table:
        index = pa.array(row_index[self.case_lines], pa.int64())
        n = len(index)
        fixed = {"line_no": pa.array(self.case_lines + first + 1, pa.int64()), "row_index": index, "call_id": index,
                 "chunk_size": pa.repeat(pa.scalar(1, pa.int64()), n), "call_returned": pa.repeat(pa.scalar(True), n)}
        fixed.update(self.columns)
        return pa.Table.from_arrays([fixed[f.name].cast(f.type) if f.name in fixed else pa.nulls(n, f.type)
                                     for f in DECISION_SCHEMA], schema=DECISION_SCHEMA)


class LooseReader:
    """Reads the lines of a block that no template read (one DuckDB query a block)."""

    def __init__(self, con: Any):
        from duckdb.sqltypes import INTEGER, VARCHAR
        import duckdb

        self.con = con
        self.question_sets: Dict[str, Any] = {}       # questions key -> questions (the recorder's S5.2 sets)
        self.bodies = _Bodies()
        self.query = _sql("answers_loose")
        con.execute(_sql("json_values"))
        con.create_function("lc_json_texts", _cached(_texts, _TEXTS), [VARCHAR],
                            duckdb.struct_type({"canonical": VARCHAR, "compact": VARCHAR}), type="arrow",
                            side_effects=False)
        con.create_function("lc_body_facts", lambda texts: self.bodies(texts), [VARCHAR],
                            duckdb.struct_type({"id": INTEGER, "options": duckdb.list_type(VARCHAR)}), type="arrow",
                            side_effects=False)
        con.create_function("lc_questions_compact", _cached(self._questions, _S), [VARCHAR], VARCHAR,
                            type="arrow", side_effects=False)
        self.usable = writes_repr(con) and writes_python_text(con)

    def _questions(self, text: str) -> str:
        value = json.loads(text)
        if not isinstance(value, dict):
            raise TypeError("questions")
        self.question_sets.setdefault(json.dumps(value, sort_keys=False, default=str), value)
        return I._compact(value)                       # noqa: SLF001

    def read(self, lines: pa.Array, todo: np.ndarray) -> Tuple[Optional[Loose], np.ndarray]:
        """Read what it can of the lines at `todo` (sorted positions); (what it read, the positions left)."""
        if not self.usable or not len(todo):
            return None, todo
        sub = lines if len(todo) == len(lines) else lines.take(pa.array(todo))
        keep = ~mask(pc.match_substring_regex(sub, _TRAILING_COMMA))
        self.bodies = _Bodies()
        result = self._query(sub, todo, keep)
        if result is None or not result.num_rows:
            return None, todo
        result, counts, read_lines = self._whole_lines(result)
        if not len(read_lines):
            return None, todo
        firsts = result.filter(pa.array(result.column("qid_pos").to_numpy() == 0))
        spread = pa.array(np.repeat(np.arange(len(counts)), counts))
        columns = {name: result.column(name) for name in result.column_names if name not in LINE_COLUMNS}
        columns.update({name: firsts.column(name).take(spread) for name in LINE_COLUMNS})
        body_id = result.column("body_id").combine_chunks()
        columns.update(self.bodies.columns(body_id))
        columns["case_id"] = self._case_ids(result.column("qid"), body_id, firsts.column("state_text").take(spread))
        compact = pc.binary_join_element_wise(firsts.column("labelled"), "\n", "").combine_chunks()
        # the question sets the query met (kept until a block is read: each distinct text is met once)
        sets, self.question_sets = self.question_sets, {}
        loose = Loose(read_lines, counts, compact, columns, np.repeat(read_lines, counts), sets)
        return loose, np.setdiff1d(todo, read_lines, assume_unique=True)

    @staticmethod
    def _whole_lines(result: pa.Table) -> Tuple[pa.Table, np.ndarray, np.ndarray]:
        """The cases of the lines whose every case the query read, their counts and the lines' positions."""
        pos, qid_pos = result.column("pos").to_numpy(), result.column("qid_pos").to_numpy()
        if not ((np.diff(pos) > 0) | ((np.diff(pos) == 0) & (np.diff(qid_pos) == 1))).all() or qid_pos[0]:
            result = result.sort_by([("pos", "ascending"), ("qid_pos", "ascending")])     # never seen: DuckDB keeps order
            pos = result.column("pos").to_numpy()
        starts = np.flatnonzero(np.r_[True, pos[1:] != pos[:-1]])
        ok = mask(result.column("case_ok")).copy()
        for name in ("expected_json", "answer_json", "body_id"):
            ok &= mask(result.column(name).is_valid())
        line_ok = np.logical_and.reduceat(ok, starts)
        for name in ("state_text", "labelled"):
            line_ok &= mask(result.column(name).is_valid())[starts]
        counts = np.diff(np.r_[starts, len(pos)])
        return result.filter(pa.array(np.repeat(line_ok, counts))), counts[line_ok], pos[starts][line_ok]

    def _query(self, sub: pa.Array, todo: np.ndarray, keep: np.ndarray) -> Optional[pa.Table]:
        """The query over the lines kept; a line that is not JSON fails it, so then only valid ones. The
        lines go in as a few record batches, so DuckDB's two threads share them."""
        import duckdb

        for attempt in range(2):
            if attempt:                                  # DuckDB's own check (json.loads refuses the same)
                self.con.register("lines", table)
                valid = mask(self.con.sql("SELECT json_valid(line) AS v FROM lines").to_arrow_table().column("v"))
                self.con.unregister("lines")
                keep = keep.copy()
                keep[np.flatnonzero(keep)[~valid]] = False
            table = pa.table({"pos": pa.array(todo[keep], pa.int64()), "line": sub.filter(pa.array(keep))})
            if not table.num_rows:
                return None
            self.con.register("lines", pa.Table.from_batches(table.to_batches(max_chunksize=-(-table.num_rows // 4))))
            try:
                return self.con.sql(self.query).to_arrow_table()
            except duckdb.Error:
                if attempt:
                    return None
            finally:
                self.con.unregister("lines")
        return None

    def _case_ids(self, qids: Any, body_id: pa.Array, states: pa.Array) -> pa.Array:
        """decisions.case_digest of each case (state JSON, qid, body JSON), unnumbered, as hex: one suffix
        (qid, body) at a time."""
        qid_codes = pc.dictionary_encode(qids.combine_chunks() if isinstance(qids, pa.ChunkedArray) else qids)
        pair = qid_codes.indices.to_numpy().astype(np.int64) * (len(self.bodies.facts) + 1) + body_id.to_numpy()
        pairs, inverse = np.unique(pair, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(inverse, minlength=len(pairs)))]
        keys = states.cast(pa.binary()).to_pylist()
        names = qid_codes.dictionary.to_pylist()
        out = np.empty(len(keys), dtype="S%d" % DIGEST)
        for k, code in enumerate(pairs.tolist()):
            qid, body = names[code // (len(self.bodies.facts) + 1)], self.bodies.facts[code % (len(self.bodies.facts) + 1)][0]
            where = order[bounds[k]:bounds[k + 1]]
            raw = digests([keys[i] for i in where], ("\x00%s\x00%s" % (qid, body)).encode("utf-8", "surrogatepass"))
            out[where] = np.frombuffer(raw, dtype="S%d" % DIGEST)
        return to_hex(out.tobytes())


def writes_python_text(con: Any) -> bool:
    """Whether DuckDB's minified JSON text is json.dumps's compact text wherever lc_json_plain says so, and
    lc_json_spaced's its text with json.dumps's separators: floats across every magnitude (DuckDB writes
    some that repr() writes in exponent form: not plain), strings with and without escapes and separators.
    Only then are its texts trusted."""
    rng = random.Random(0)
    values: list = PROBES + [rng.random() * 10 ** rng.uniform(-8, 20) for _ in range(400)]
    values += ["plain", "é ü 中", "\x7f", "tab\t", 'q"', "a,b:c", "a\nb", "back\\slash", "\x01", "\x0b", "\u2028",
               '"', "\\", "a, b: c", -7, 0, 10 ** 14, True, None, [1.5, "x"], ["x,y", "z:"]]
    texts = [json.dumps({"v": v, "w": [v]}) for v in values] + [json.dumps({"v": v}, ensure_ascii=False) for v in values]
    try:
        rows = con.execute("SELECT CAST(json(t) AS VARCHAR), lc_json_plain(json(t)), lc_json_spaced(json(t)) "
                           "FROM (SELECT unnest(?) AS t)", [texts]).fetchall()
    except Exception:                    # noqa: BLE001 -- any failure: the per-row path reads these lines
        return False
    return all(not plain or (text == I._compact(json.loads(t))  # noqa: SLF001
                             and spaced in (None, _json(json.loads(t)))) for (text, plain, spaced), t in zip(rows, texts))
