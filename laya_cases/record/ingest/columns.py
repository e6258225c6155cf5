"""The decision columns of the lines one template matched, column-wise (record/ingest/template.py).

Each function mirrors a per-row rule of decisions.py / answers.py / record/ingest/answers.py for the leaf types the
template fixes; a shape whose per-row reading could raise, or that these functions do not mirror,
raises Unsupported when the template is learned (build() over zero lines), so its lines go through
the per-row path and its errors are the per-row path's errors.
"""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.record.ingest.ids import digests, to_hex
from laya_cases.record.ingest.template import Captures, Node, Template, Unsupported, python_max, questions_bucket
from laya_cases.store.schema import DECISION_SCHEMA

_F, _S, _B = pa.float64(), pa.string(), pa.bool_()


_EMPTY = {"str": _S, "int": pa.int64(), "float": _F, "bool": _B, "strlist": pa.list_(_S)}


def check(t: Template) -> None:
    """Learn which leaves must hold non-negative numbers; raise Unsupported for a shape not read here."""
    empty = pa.Table.from_arrays([pa.array([], _EMPTY[kind]) for kind in t.kinds], ["g%d" % i for i in range(len(t.kinds))])
    build(Captures(t, empty), pa.array([], pa.int64()), pa.array([], pa.int64()), learn=True)


class Fixed(NamedTuple):
    """A column holding one value on every line (built at its final length by _interleave)."""
    value: Any
    kind: pa.DataType


class _Reader:
    def __init__(self, cap: Captures, learn: bool):
        self.cap, self.m, self.learn = cap, cap.m, learn

    def const(self, value: Any, kind: pa.DataType) -> pa.Array:
        if value is None:
            return pa.nulls(self.m, kind)
        if pa.types.is_primitive(kind) and self.m:
            return pa.repeat(pa.scalar(value, kind), self.m)         # (slow for strings and lists: take)
        return pa.array([value], kind).take(np.zeros(self.m, dtype=np.int32))

    def value(self, node: Node) -> pa.Array:
        return self.cap.value(node.leaf)

    def key(self, node: Optional[Node], empty_is_none: bool = False) -> tuple:
        """(JSON text, str() key) of a language/model/item_id value; None when absent or null."""
        if node is None or (node.leaf is None and node.value is None):
            return self.const(None, _S), self.const(None, _S)
        if node.kind == "str":
            value = self.value(node)
            if empty_is_none:
                blank = pc.equal(value, "")
                return (pc.if_else(blank, None, self.cap.tok[node.leaf]), pc.if_else(blank, None, value))
            return self.cap.tok[node.leaf], value
        if node.kind == "num" and not empty_is_none:
            return self.cap.tok[node.leaf], self.cap.tok[node.leaf]
        raise Unsupported("key")

    def num(self, node: Optional[Node]) -> pa.Array:
        """_num(): a JSON number as float, anything else null."""
        return self.cap.num(node.leaf) if node is not None and node.kind == "num" else self.const(None, _F)

    def noul(self, node: Optional[Node]) -> pa.Array:
        """answers._noul(): missing 0.0, a number, a boolean as 0/1; anything else raises there."""
        if node is None:
            return self.const(0.0, _F)
        if node.kind == "num":
            return self.cap.num(node.leaf)
        if node.kind == "bool":
            return pc.cast(self.cap.is_true(node.leaf), _F)
        raise Unsupported("noul")


def _tags(r: _Reader, node: Optional[Node]) -> pa.Array:
    """check_row(): str() of each tag; absent, null or empty: no tags."""
    if node is None or (node.leaf is None and node.value in (None, [])):
        return r.const([], pa.list_(_S))
    if node.kind != "strlist":
        raise Unsupported("tags")
    return r.cap.value(node.leaf)


def _row_columns(r: _Reader, root: Dict[str, Node], line_no: pa.Array, row_index: pa.Array) -> Dict[str, Any]:
    language, language_key = r.key(root.get("language"))
    model, model_key = r.key(root.get("model"), empty_is_none=True)
    item, source_item = root.get("item_id"), root.get("source_item_id")
    for name, node in (("item_id", item), ("source_item_id", source_item)):
        if node is not None and node.kind == "bool":
            raise Unsupported(name)
    latency = root.get("latency_ms")
    if latency is None or (latency.leaf is None and latency.value is None):
        call_ms = r.const(None, _F)
    elif latency.kind == "num":
        call_ms = r.cap.num(latency.leaf)
        if r.learn:
            r.cap.t.nonnegative.append(latency.leaf)
    else:
        raise Unsupported("latency_ms")
    answers = root.get("answers")
    if answers is None or not isinstance(answers.children, dict):
        raise Unsupported("answers")
    return {"row_index": row_index, "line_no": line_no, "language": language, "language_key": language_key,
            "model": model, "model_key": model_key, "tags": _tags(r, root.get("tags")),
            "item_id": r.key(item)[1], "source_item_id": r.key(source_item)[1], "call_id": row_index, "call_ms": call_ms,
            "chunk_size": Fixed(1, pa.int64()), "call_returned": Fixed(True, _B)}


def _confidence(r: _Reader, fields: Dict[str, Node], kind: Any) -> tuple:
    """answers.confidence(), answers.gate_confidence() and the aligned probabilities' source."""
    ac, cf = fields.get("answer_confidence"), fields.get("confidence")
    probs = fields.get("probabilities")
    probs = probs if probs is not None and isinstance(probs.children, dict) and probs.children else None
    if probs is not None and any(v.kind != "num" for v in probs.children.values()):
        raise Unsupported("probabilities")
    gate = r.num(ac) if ac is not None and ac.kind == "num" else r.num(cf)
    for node, source in ((ac, "answer_confidence"), (cf, "confidence")):
        if node is not None and node.kind == "num":
            return r.cap.num(node.leaf), source, gate, probs
    if kind == "noul":
        p = r.noul(fields.get("noul"))
        q = pc.subtract(1.0, p)
        return pc.if_else(pc.greater(q, p), q, p), "noul", gate, probs
    if probs is not None:
        return python_max([r.cap.num(v.leaf) for v in probs.children.values()]), "probabilities", gate, probs
    return r.const(None, _F), None, gate, probs


def _judged(r: _Reader, fields: Dict[str, Node], kind: Any, label: Node) -> tuple:
    """(correct, score_mae, predicted) as answers.correct / score_error / predicted compute them."""
    none_b, none_f, none_s = r.const(None, _B), r.const(None, _F), r.const(None, _S)
    if kind == "choice":
        choice = fields.get("choice")
        if choice is not None and isinstance(choice.children, (dict, list)):
            raise Unsupported("choice")
        if choice is None or (choice.leaf is None and choice.value is None):
            predicted = none_s
        elif choice.kind == "str":
            predicted = r.value(choice)
        elif choice.kind == "num":
            predicted = r.cap.tok[choice.leaf]
        else:
            raise Unsupported("choice")
        if label.kind != "str":
            return none_b, none_f, predicted
        same = (pc.equal(r.cap.tok[choice.leaf], r.cap.tok[label.leaf]) if choice is not None and
                choice.kind == "str" else r.const(False, _B))
        return same, none_f, predicted
    if kind == "noul":
        hit = pc.greater_equal(r.noul(fields.get("noul")), 0.5)
        predicted = pc.if_else(hit, "true", "false")
        return (pc.equal(hit, r.cap.is_true(label.leaf)) if label.kind == "bool" else none_b), none_f, predicted
    if kind == "score":
        score = fields.get("score")
        if score is not None and score.kind != "num":
            raise Unsupported("score")
        predicted = none_s
        if score is not None:
            tok = r.cap.tok[score.leaf]
            predicted = pc.if_else(pc.match_substring_regex(tok, "[.e]"), tok, pc.binary_join_element_wise(tok, ".0", ""))
        if label.kind != "num":
            return none_b, none_f, predicted
        value = r.cap.num(score.leaf) if score is not None else r.const(0.0, _F)
        return none_b, pc.abs(pc.subtract(value, r.cap.num(label.leaf))), predicted
    return none_b, none_f, none_s


def _case_columns(r: _Reader, pos: int, qid: str, label: Node, answer: Node) -> Dict[str, Any]:
    t = r.cap.t
    if not isinstance(answer.children, dict):
        raise Unsupported("answer")
    fields = answer.children
    kind_node = fields.get("type")
    kind = None if kind_node is None else kind_node.value
    if kind is not None and not isinstance(kind, str):
        raise Unsupported("type")
    options, option_texts, instructions, question_type = t.facts(qid)
    conf, source, gate, probs = _confidence(r, fields, kind)
    correct, mae, predicted = _judged(r, fields, kind, label)
    aligned: Any = Fixed(None, pa.list_(_F))
    if probs is not None:
        aligned = Fixed([], pa.list_(_F)) if not options else _aligned(r, probs, options)
    abstention = fields.get("abstention")
    expected_kind = {"str": "string", "num": "number", "bool": "bool"}.get(label.kind) or (
        "null" if label.value is None else "other")
    return {"qid": Fixed(qid, _S), "qid_pos": Fixed(pos, pa.int64()),
            "question_type": Fixed(question_type, _S), "instructions": Fixed(instructions, _S),
            "options": Fixed(list(options), pa.list_(_S)), "option_texts": Fixed(list(option_texts), pa.list_(_S)),
            "expected_json": r.cap.text(label.parts), "expected_kind": Fixed(expected_kind, _S),
            "answer_type": Fixed(kind, _S), "answer_json": r.cap.text(answer.parts), "predicted": predicted,
            "probabilities": aligned, "noul_p": r.num(fields.get("noul")), "score_value": r.num(fields.get("score")),
            "answer_confidence": r.num(fields.get("answer_confidence")),
            "confidence_field": r.num(fields.get("confidence")), "confidence": conf,
            "confidence_source": Fixed(source, _S), "gate_confidence": gate, "correct": correct,
            "score_mae": mae,
            "abstention": r.value(abstention) if abstention is not None and abstention.kind == "str" else r.const(None, _S),
            "temperature_bucket": Fixed(questions_bucket(kind, options), _S)}


def _aligned(r: _Reader, probs: Node, options: List[str]) -> pa.Array:
    columns = [r.cap.num(probs.children[o].leaf) if o in probs.children else r.const(None, _F) for o in options]
    k = len(options)
    values = pa.concat_arrays(columns).take(_interleaving(r.m, k))
    return pa.ListArray.from_arrays(pa.array(np.arange(0, r.m * k + 1, k, dtype=np.int32)), values)


def _interleaving(m: int, k: int) -> pa.Array:
    """Take-indices that turn k arrays of m values, concatenated, into m runs of k (value i of each)."""
    return pa.array((np.arange(k, dtype=np.int64)[None, :] * m + np.arange(m, dtype=np.int64)[:, None]).ravel())


def _interleave(per_qid: List[Dict[str, Any]], m: int) -> pa.Table:
    """The rows of each line in qid order: row i of the first qid's columns, row i of the second, ..."""
    k = len(per_qid)
    repeat = pa.array(np.repeat(np.arange(m, dtype=np.int64), k)) if k > 1 else None
    interleaving = _interleaving(m, k) if k > 1 else None
    arrays = []
    for field in DECISION_SCHEMA:
        columns = [c.get(field.name) for c in per_qid]
        if all(c is None or (isinstance(c, Fixed) and c.value is None) for c in columns):
            arrays.append(pa.nulls(m * k, field.type))
            continue
        columns = [Fixed(None, field.type) if c is None else c for c in columns]
        if any(c.kind != field.type if isinstance(c, Fixed) else c.type != field.type for c in columns):
            raise Unsupported("type")
        if all(isinstance(c, Fixed) for c in columns):           # one value per qid: k values, repeated
            index = np.zeros(m * k, dtype=np.int32) if k == 1 else np.tile(np.arange(k, dtype=np.int32), m)
            arrays.append(pa.array([c.value for c in columns], field.type).take(index))
            continue
        columns = [pa.array([c.value], c.kind).take(np.zeros(m, dtype=np.int32)) if isinstance(c, Fixed) else c
                   for c in columns]
        if k == 1:
            arrays.append(columns[0])
        elif all(c is columns[0] for c in columns):          # a row's own value, on each of its cases
            arrays.append(columns[0].take(repeat))
        else:
            arrays.append(pa.concat_arrays(columns).take(interleaving))
    return pa.Table.from_arrays(arrays, schema=DECISION_SCHEMA)


def build(cap: Captures, line_no: pa.Array, row_index: pa.Array, learn: bool = False) -> pa.Table:
    """Every decision row of the matched lines, in line order and qid order within a line (case_id holds
    the unnumbered digest, slice_set null)."""
    r = _Reader(cap, learn)
    root = cap.t.root.children
    row = _row_columns(r, root, line_no, row_index)
    expected, answers = root["expected"].children, root["answers"].children
    if not expected:
        raise Unsupported("no expected")
    per_qid = []
    for pos, (qid, label) in enumerate(expected.items()):
        if qid not in answers:
            raise Unsupported("missing answer")
        columns = dict(row, **_case_columns(r, pos, qid, label, answers[qid]))
        columns["case_id"] = case_ids(cap)[qid]
        per_qid.append(columns)
    return _interleave(per_qid, r.m)


def case_ids(cap: Captures) -> Dict[str, pa.Array]:
    """The unnumbered case id of every line and expected qid (decisions.case_digest), computed once."""
    if not cap.case_ids:
        # (a line whose state has another type than the template's leaf has no state text; its whole line is
        # refused later, so its digests are never used)
        states = pc.fill_null(cap.text(cap.t.root.children["state"].parts), "").cast(pa.binary()).to_pylist() if cap.m else []
        for qid in cap.t.root.children["expected"].children:
            suffix = ("\x00%s\x00%s" % (qid, cap.t.body_json(qid))).encode("utf-8", "surrogatepass")
            cap.case_ids[qid] = to_hex(digests(states, suffix))
    return cap.case_ids


def learn(line: str) -> Template:
    """The template of one canonical line, refused (Unsupported) when these functions do not read its shape."""
    template = Template(line)
    try:
        check(template)                  # raises Unsupported for shapes it does not read
    except (KeyError, TypeError, ValueError, AttributeError, pa.ArrowException):
        raise Unsupported("shape") from None     # anything else unforeseen: the per-row path reads it
    return template
