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
from importlib import resources
from typing import Any, Callable, Dict, Optional, Tuple

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
_BODY = pa.struct([("body_json", _S), ("options", pa.list_(_S)), ("option_texts", pa.list_(_S)),
                   ("instructions", _S), ("question_type", _S)])
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
            if text not in memo:
                if len(memo) >= CACHE:
                    memo.clear()
                try:
                    memo[text] = convert(text)
                except (ValueError, RecursionError, TypeError, UnicodeEncodeError):
                    memo[text] = None
            values.append(memo[text])
        return pa.array(values, kind).take(encoded.indices)
    return run


def _texts(text: str) -> Dict[str, str]:
    value = json.loads(text)
    return {"canonical": _json(value), "compact": I._compact(value)}  # noqa: SLF001


def _body(text: str) -> Dict[str, Any]:
    raw = json.loads(text)
    options, option_texts, instructions, question_type = body_facts(raw)
    return {"body_json": _json(raw), "options": list(options),
            "option_texts": list(option_texts), "instructions": instructions, "question_type": question_type}


class Loose:
    """What the reader read of a block: its lines (positions), cases per line, their labelled lines
    (compact text and LF, for the run's digest) and decision rows (line_no and row_index set by `table`)."""

    def __init__(self, lines: np.ndarray, counts: np.ndarray, compact: pa.Array, rows: pa.Table,
                 case_lines: np.ndarray, questions: Dict[str, Any]):
        self.lines, self.counts, self.compact, self.rows, self.case_lines = lines, counts, compact, rows, case_lines
        self.questions = questions

    def table(self, first: int, row_index: np.ndarray) -> pa.Table:
        index = pa.array(row_index[self.case_lines], pa.int64())
        n = len(index)
        fixed = {"line_no": pa.array(self.case_lines + first + 1, pa.int64()), "row_index": index, "call_id": index,
                 "chunk_size": pa.repeat(pa.scalar(1, pa.int64()), n), "call_returned": pa.repeat(pa.scalar(True), n)}
        names = set(self.rows.column_names)
        return pa.Table.from_arrays([fixed[f.name] if f.name in fixed else self.rows.column(f.name).cast(f.type)
                                     if f.name in names else pa.nulls(n, f.type)
                                     for f in DECISION_SCHEMA], schema=DECISION_SCHEMA)


class LooseReader:
    """Reads the lines of a block that no template read (one DuckDB query a block)."""

    def __init__(self, con: Any):
        from duckdb.sqltypes import VARCHAR

        self.con = con
        self.question_sets: Dict[str, Any] = {}       # questions key -> questions (the recorder's S5.2 sets)
        con.execute(_sql("json_values"))
        con.create_function("lc_json_texts", _cached(_texts, _TEXTS), [VARCHAR],
                            _struct(_TEXTS), type="arrow", side_effects=False)
        con.create_function("lc_body_facts", _cached(_body, _BODY), [VARCHAR],
                            _struct(_BODY), type="arrow", side_effects=False)
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
        result = self._query(sub, todo, keep)
        if result is None or not result.num_rows:
            return None, todo
        pos = result.column("pos").to_numpy()
        starts = np.flatnonzero(np.r_[True, pos[1:] != pos[:-1]])
        ok = mask(result.column("case_ok")).copy()
        for name in ("state_text", "expected_json", "answer_json", "digest_suffix"):
            ok &= mask(result.column(name).is_valid())
        first_ok = mask(result.column("labelled").is_valid())[starts]
        line_ok = np.logical_and.reduceat(ok, starts) & first_ok
        counts = np.diff(np.r_[starts, len(pos)])
        keep_case = np.repeat(line_ok, counts)
        if not keep_case.any():
            return None, todo
        result = result.filter(pa.array(keep_case))
        read_lines = pos[starts][line_ok]
        compact = pc.binary_join_element_wise(result.column("labelled").drop_null(), "\n", "")
        rows = result.append_column("case_id", self._case_ids(result))
        # the question sets the query met (kept until a block is read: each distinct text is met once)
        sets, self.question_sets = self.question_sets, {}
        loose = Loose(read_lines, counts[line_ok], compact.combine_chunks() if isinstance(compact, pa.ChunkedArray)
                      else compact, rows, result.column("pos").to_numpy(), sets)
        return loose, np.setdiff1d(todo, read_lines, assume_unique=True)

    def _query(self, sub: pa.Array, todo: np.ndarray, keep: np.ndarray) -> Optional[pa.Table]:
        """The query over the lines kept; a line that is not JSON fails it, so then only valid ones."""
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
            self.con.register("lines", table)
            try:
                return self.con.sql(_sql("answers_loose")).to_arrow_table()
            except duckdb.Error:
                if attempt:
                    return None
            finally:
                self.con.unregister("lines")
        return None

    def _case_ids(self, result: pa.Table) -> pa.Array:
        """decisions.case_digest of each case (state JSON, qid, body JSON), unnumbered, as hex."""
        suffix = pc.dictionary_encode(result.column("digest_suffix").combine_chunks())
        states = result.column("state_text").combine_chunks()
        codes = suffix.indices.to_numpy()
        out = np.empty(len(codes), dtype="S%d" % DIGEST)
        for code, text in enumerate(suffix.dictionary.to_pylist()):
            where = np.flatnonzero(codes == code)
            keys = states.take(pa.array(where)).cast(pa.binary()).to_pylist()
            raw = digests(keys, text.encode("utf-8", "surrogatepass"))
            out[where] = np.frombuffer(raw, dtype="S%d" % DIGEST)
        return to_hex(out.tobytes())


def _struct(kind: pa.StructType) -> Any:
    import duckdb
    from duckdb.sqltypes import VARCHAR

    return duckdb.struct_type({f.name: duckdb.list_type(VARCHAR) if pa.types.is_list(f.type) else VARCHAR
                               for f in kind})


def writes_python_text(con: Any) -> bool:
    """Whether DuckDB's minified JSON text is json.dumps's compact text wherever lc_json_plain says so:
    floats across every magnitude (DuckDB writes some that repr() writes in exponent form: not plain),
    strings with and without escapes. Only then are its texts trusted."""
    rng = random.Random(0)
    values: list = PROBES + [rng.random() * 10 ** rng.uniform(-8, 20) for _ in range(400)]
    values += ["plain", "é ü 中", "\x7f", "tab\t", 'q"', "a,b:c", -7, 0, 10 ** 14, True, None, [1.5, "x"]]
    texts = [json.dumps({"v": v, "w": [v]}) for v in values]
    try:
        rows = con.execute("SELECT CAST(json(t) AS VARCHAR), lc_json_plain(json(t)) FROM (SELECT unnest(?) AS t)",
                           [texts]).fetchall()
    except Exception:                    # noqa: BLE001 -- any failure: the per-row path reads these lines
        return False
    return all(not plain or text == I._compact(json.loads(t)) for (text, plain), t in zip(rows, texts))  # noqa: SLF001
