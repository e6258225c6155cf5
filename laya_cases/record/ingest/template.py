"""Answers lines in canonical form, read column-wise: the fast path of `ingest` (record/ingest/bulk.py).

A line is *canonical* when it is exactly what `json.dumps(value, ensure_ascii=False)` writes for
the value it parses to (separators `, ` and `: `, Python's float repr, Python's string escapes).
A template is learned from one canonical line: its keys, key order, nesting and the type of every
string, number and boolean outside `questions` (and outside each answer's `type`, which are kept as
literal text). DuckDB parses a block of lines into the template's typed leaves (`from_json`), the
canonical text of every line is rebuilt from those values column-wise, and only lines whose rebuilt
text equals the line byte for byte are read this way: for them the parsed values are exactly what
`json.loads` returns, and every stored JSON text is a slice of the line. Every other line (another
shape, a float not in repr form, an escape Python would not write, NaN, a huge int, duplicate keys,
blank and comment lines) goes through the per-row path, as do all lines of a template whose shape the
column-wise reading does not cover (record/ingest/columns.py raises Unsupported when it is learned).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.core import identity as I
from laya_cases.core import questions
from laya_cases.core.dataset import check_row
from laya_cases.record.decisions import _json, body_facts

_META = set("\\.+*?()|[]{}^$")
_F, _S = pa.float64(), pa.string()
_DUCK = {"str": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "strlist": ["VARCHAR"]}
_ESCAPED = '["\\\\\\x00-\\x1f]'          # a character json.dumps escapes


class Unsupported(Exception):
    """The line's shape is outside what the column-wise reading covers (it goes through the per-row path)."""


class Node:
    """One value of the exemplar line: a leaf (a typed value), a literal, or an object/array of nodes."""

    def __init__(self, value: Any, leaf: Optional[int] = None, kind: Optional[str] = None):
        self.value, self.leaf = value, leaf
        self.kind = "num" if kind in ("int", "float") else kind     # what ingest_columns reads
        self.parts: List[Any] = []          # canonical text: literal str or leaf index
        self.cparts: List[Any] = []         # compact text (identity's separators): str, leaf or ("c", leaf)
        self.children: Any = None           # dict key -> Node, list of Node, or None
        self.duck: Any = None               # the DuckDB structure of its leaves (None: no leaves)


def _sql_text(text: str) -> str:
    return "'%s'" % text.replace("'", "''")


def _scalar_kind(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "str"
    if isinstance(value, int):
        if abs(value) >= 10 ** 15:
            raise Unsupported("int")
        return "int"
    if isinstance(value, float):
        if value != value or value in (np.inf, -np.inf):
            raise Unsupported("float")
        return "float"
    return None


class Template:
    """One line shape: the DuckDB query that types its leaves and how its canonical text is rebuilt."""

    def __init__(self, line: str):
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict) or _json(obj) != line:
                raise Unsupported("not canonical")
        except (ValueError, RecursionError, TypeError):
            raise Unsupported("json") from None
        try:
            check_row(obj, "")
        except Exception:
            raise Unsupported("row") from None
        self.kinds: List[str] = []
        self.paths: List[str] = []
        self.root = self._walk(obj, lit=False, path=(), sql="j")
        if not self.kinds:
            raise Unsupported("no leaves")
        self.structure = _sql_text(json.dumps(self.root.duck))
        self.columns = [(p, "g%d" % i) for i, p in enumerate(self.paths)] + [      # f<i>: repr() of float g<i>
            ("CAST(%s AS VARCHAR)" % p, "f%d" % i) for i, p in enumerate(self.paths) if self.kinds[i] == "float"]
        self.sql = "SELECT %s FROM (SELECT %%s AS j FROM lines)" % ", ".join(
            "%s AS %s" % column for column in self.columns).replace("%", "%%")
        self.questions = obj["questions"]
        self.questions_key = json.dumps(obj["questions"], sort_keys=False, default=str)
        labelled = [(k, self.root.children[k]) for k in I.LABELLED_KEYS if k in obj]
        self.labelled_parts: List[Any] = ["{"]
        for i, (key, node) in enumerate(labelled):
            self.labelled_parts += ([","] if i else []) + [I._compact(key) + ":"] + node.cparts  # noqa: SLF001
        self.labelled_parts.append("}")
        self.value_leaves: List[int] = []
        self.nonnegative: List[int] = []

    def _walk(self, value: Any, lit: bool, path: Tuple[Any, ...], sql: str) -> Node:
        lit = lit or path[:1] == ("questions",) or (len(path) == 3 and path[0] == "answers" and path[2] == "type")
        if path == ("tags",) and isinstance(value, list) and all(isinstance(t, str) for t in value):
            return self._leaf(value, "strlist", sql)
        if isinstance(value, (dict, list)) and not lit:
            return self._container(value, path, sql)
        kind = None if lit else _scalar_kind(value)
        if kind is None:
            node = Node(value)
            node.parts, node.cparts = [_json(value)], [I._compact(value)]  # noqa: SLF001
            return node
        return self._leaf(value, kind, sql)

    def _leaf(self, value: Any, kind: str, sql: str) -> Node:
        self.kinds.append(kind)
        self.paths.append(sql)
        node = Node(value, len(self.kinds) - 1, kind)
        node.parts = [node.leaf]
        node.cparts = [("c", node.leaf) if kind == "strlist" else node.leaf]
        node.duck = _DUCK[kind]
        return node

    def _container(self, value: Any, path: Tuple[Any, ...], sql: str) -> Node:
        node = Node(value)
        is_dict = isinstance(value, dict)
        items = list(value.items()) if is_dict else list(enumerate(value))
        node.children = {} if is_dict else []
        opening, closing = ("{", "}") if is_dict else ("[", "]")
        node.parts, node.cparts = [opening], [opening]
        duck: Dict[str, Any] = {}
        for i, (key, item) in enumerate(items):
            child_sql = ("struct_extract(%s, %s)" % (sql, _sql_text(key)) if is_dict else
                         "list_extract(%s, %d)" % (sql, i + 1))
            child = self._walk(item, False, path + (key,), child_sql)
            if child.duck is not None:
                duck[key if is_dict else "list"] = child.duck
            if is_dict:
                node.children[key] = child
                node.parts += [(", " if i else "") + _json(key) + ": "] + child.parts
                node.cparts += [("," if i else "") + I._compact(key) + ":"] + child.cparts  # noqa: SLF001
            else:
                node.children.append(child)
                node.parts += ([", "] if i else []) + child.parts
                node.cparts += ([","] if i else []) + child.cparts
        node.parts.append(closing)
        node.cparts.append(closing)
        if not is_dict and duck:             # a list: one element type (its leaves' shape) for every position
            shapes = {json.dumps(c.duck, sort_keys=True) for c in node.children}
            if len(shapes) != 1 or any(c.leaf is None for c in node.children):
                raise Unsupported("list")
            node.duck = [node.children[0].duck]
        elif duck:
            node.duck = duck
        return node

    def body_json(self, qid: str) -> str:
        return _json(self.questions.get(qid))

    def facts(self, qid: str) -> tuple:
        return body_facts(self.questions.get(qid))


class Captures:
    """The typed leaves of the lines a template read, with each leaf's canonical text, column-wise."""

    def __init__(self, template: Template, table: pa.Table):
        self.t, self.m = template, table.num_rows
        self.col = [table.column(i).combine_chunks() if table.num_columns else pa.array([], _S)
                    for i in range(len(template.kinds))]
        self.tok: List[pa.Array] = []
        self.ctok: Dict[int, pa.Array] = {}
        self.case_ids: Dict[str, pa.Array] = {}      # qid -> unnumbered case ids (ingest_columns.case_ids)
        names = set(table.column_names)
        for leaf, kind in enumerate(template.kinds):
            if kind == "float" and "f%d" % leaf in names:      # DuckDB's double -> VARCHAR is Python's repr()
                self.tok.append(table.column("f%d" % leaf).combine_chunks())
            else:
                self.tok.append(self._token(leaf, kind))

    def _token(self, leaf: int, kind: str) -> pa.Array:
        col = self.col[leaf]
        if kind == "str":
            return _quoted(col)
        if kind == "bool":
            return pc.if_else(col, "true", "false")
        if kind == "int":
            return pc.cast(col, _S)
        if kind == "float":
            return _float_repr(col)
        flat = _quoted(pc.list_flatten(col))
        offsets = pc.subtract(col.offsets, col.offsets[0]) if len(col) else pa.array([0], pa.int32())
        lists = pa.ListArray.from_arrays(offsets, flat, mask=col.is_null())
        self.ctok[leaf] = pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", "")
        return pc.binary_join_element_wise("[", pc.binary_join(lists, ", "), "]", "")

    def filter(self, mask: np.ndarray) -> "Captures":
        keep = pa.array(mask)
        other = object.__new__(Captures)
        other.t, other.m = self.t, int(mask.sum())
        other.col = [c.filter(keep) for c in self.col]
        other.tok = [c.filter(keep) for c in self.tok]
        other.ctok = {k: c.filter(keep) for k, c in self.ctok.items()}
        other.case_ids = {k: c.filter(keep) for k, c in self.case_ids.items()}
        return other

    def text(self, parts: List[Any]) -> pa.Array:
        merged: List[Any] = []
        for part in parts:                   # fold neighbouring literals
            item = self.ctok[part[1]] if isinstance(part, tuple) else self.tok[part] if isinstance(part, int) else part
            if isinstance(item, str) and merged and isinstance(merged[-1], str):
                merged[-1] += item
            else:
                merged.append(item)
        if len(merged) == 1:
            return merged[0] if not isinstance(merged[0], str) else pa.array([merged[0]] * self.m, _S)
        return pc.binary_join_element_wise(*merged, "")

    def num(self, leaf: int) -> pa.Array:
        return pc.cast(self.col[leaf], _F, safe=False)     # an int beyond 2**53 is on a line `ok` refuses

    def value(self, leaf: int) -> pa.Array:
        return self.col[leaf]

    def is_true(self, leaf: int) -> pa.Array:
        return self.col[leaf]

    def ok(self, lines: pa.Array) -> np.ndarray:
        """Lines whose rebuilt canonical text is the line itself (and whose latency is not negative)."""
        return mask(pc.and_(pc.fill_null(pc.equal(self.text(self.t.root.parts), lines), False), self.valid()))

    def valid(self) -> pa.Array:
        """Lines whose ints are read exactly and whose latency is not negative (as the per-row path reads them)."""
        good = pa.array(np.ones(self.m, dtype=bool))
        for leaf, kind in enumerate(self.t.kinds):   # an int the per-row path reads as float exactly
            if kind == "int":
                small = pc.and_(pc.less(self.col[leaf], 10 ** 15), pc.greater(self.col[leaf], -10 ** 15))
                good = pc.and_(good, pc.fill_null(small, False))
        for leaf in self.t.nonnegative:
            good = pc.and_(good, pc.fill_null(pc.greater_equal(self.num(leaf), 0.0), False))
        return good


def _quoted(col: pa.Array) -> pa.Array:
    """json.dumps(s, ensure_ascii=False) of each string (Python itself for the few with escapes)."""
    text = pc.binary_join_element_wise('"', col, '"', "")
    special = np.flatnonzero(mask(pc.match_substring_regex(col, _ESCAPED)))
    if len(special):
        fixed = [None if v is None else _json(v) for v in col.take(pa.array(special)).to_pylist()]
        text = pc.replace_with_mask(text, pa.array(np.isin(np.arange(len(col)), special)), pa.array(fixed, _S))
    return text


def _float_repr(col: pa.Array) -> pa.Array:
    """repr() of each float: Arrow's shortest digits, Python's layout (numpy's repr where they differ)."""
    text = pc.cast(col, _S)
    sci = pc.match_substring(text, "e")
    text = pc.if_else(pc.or_(pc.match_substring(text, "."), sci), text, pc.binary_join_element_wise(text, ".0", ""))
    magnitude = pc.abs(col)
    odd = pc.or_(sci, pc.and_(pc.less(magnitude, 1e-4), pc.greater(magnitude, 0.0)))
    where = np.flatnonzero(mask(odd))
    if len(where):
        fixed = col.take(pa.array(where)).to_numpy(zero_copy_only=False).astype(str)
        text = pc.replace_with_mask(text, pa.array(np.isin(np.arange(len(col)), where)), pa.array(fixed.tolist(), _S))
    return text


#: Doubles at every switch of Python's repr() (exponent form below 1e-4 and from 1e16, shortest digits)
PROBES = [0.0, -0.0, 1.0, -1.5, 0.1, 0.30000000000000004, 1e-05, 2.5e-05, 0.0001, 0.00012, 123456789.125,
          999999999999999.9, 1e15, 1e16, 1.2345678901234568e+16, 1e22, 5e-324, 2.2250738585072014e-308,
          1.7976931348623157e+308, 0.6520773238020448, 1234567890123456.8, 100.0, 9.999999999999999e-05]


def writes_repr(con: Any) -> bool:
    """Whether this DuckDB's CAST(double AS VARCHAR) writes Python's repr() (DuckDB 2.0 does; it is only
    trusted where it does, since a float text that is not repr would let a non-canonical line through)."""
    try:
        rows = con.execute("SELECT CAST(v AS VARCHAR) FROM (SELECT unnest(?::DOUBLE[]) AS v)", [PROBES]).fetchall()
    except Exception:                    # noqa: BLE001 -- any failure: Arrow writes the float text
        return False
    return [r[0] for r in rows] == [repr(v) for v in PROBES]


def mask(values: Any) -> np.ndarray:
    """A boolean Arrow array as numpy, null as False (without pyarrow's conversion, which imports pandas)."""
    values = pc.fill_null(values, False)
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return values.cast(pa.uint8()).to_numpy().view(np.bool_)


def python_max(values: List[Any]) -> Any:
    """Python's max() over columns in order (NaN never replaces, a later NaN never wins)."""
    best = values[0]
    for v in values[1:]:
        best = pc.if_else(pc.greater(v, best), v, best)
    return best


def questions_bucket(kind: Any, options: List[str]) -> Optional[str]:
    return questions.bucket(str(kind), len(options)) if kind in questions.TYPES and options else None


def shape(value: Any, path: Tuple[Any, ...] = ()) -> Any:
    """What a template fixes about a parsed line: keys, order, leaf types, `questions` and answer types."""
    if path[:1] == ("questions",) or (len(path) == 3 and path[0] == "answers" and path[2] == "type"):
        return json.dumps(value)
    if isinstance(value, dict):
        return tuple((k, shape(v, path + (k,))) for k, v in value.items())
    if isinstance(value, list):
        return "tags" if path == ("tags",) else tuple(shape(v, path + (i,)) for i, v in enumerate(value))
    return type(value).__name__
