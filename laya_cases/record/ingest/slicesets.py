"""Slice-set ids of decision rows, column-wise, numbered as DecisionBuffer._slice_set numbers them
(for the column-wise `ingest`, record/ingest/bulk.py)."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ESC = [("\\", "\\\\"), ("|", "\\|"), (",", "\\,")]


def slice_sets(table: pa.Table, known: Dict[tuple, int]) -> pa.Array:
    """Each row's slice set (numbered by first appearance, as DecisionBuffer._slice_set numbers them):
    every attribute dictionary-encoded, the codes combined into one integer per row."""
    code, span, parts = np.zeros(table.num_rows, dtype=np.int64), 1, []
    for name in ("language_key", "model_key", "qid", "tags", "answer_type", "correct"):
        column = table.column(name).combine_chunks()
        if pa.types.is_list(column.type):
            column = _part(column)           # a list as text no other list shares
        elif pa.types.is_boolean(column.type):
            column = column.cast(pa.int8())
        encoded = column.dictionary_encode()
        index = pc.fill_null(pc.add(encoded.indices.cast(pa.int64()), 1), 0)   # 0: null
        index = np.frombuffer(index.buffers()[1], dtype=np.int64)[index.offset:index.offset + len(index)]
        size = len(encoded.dictionary) + 1
        if span * size >= 1 << 62:           # renumber the combinations so far densely first
            distinct, code = np.unique(code, return_inverse=True)
            code, span = code.ravel().astype(np.int64), len(distinct)
        code, span = code * size + index, span * size
        parts.append((index, [None] + encoded.dictionary.to_pylist()))
    unique, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    local = np.empty(len(unique), dtype=np.int64)
    for u in np.argsort(first, kind="stable").tolist():     # in order of first appearance
        key = tuple(options[index[first[u]]] for index, options in parts)
        local[u] = known.setdefault(key, len(known))
    return pa.array(local[inverse.ravel()])


def _part(column: Any) -> pa.Array:
    """A slice-set component as text no other value shares (escaped where needed, null as \\N)."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_boolean(column.type):
        return pc.fill_null(pc.if_else(column, "T", "F"), "\\N")
    is_list = pa.types.is_list(column.type)
    flat = pc.list_flatten(column) if is_list else column
    if pc.any(pc.match_substring_regex(flat, r"[\\|,]")).as_py():
        for old, new in _ESC:
            flat = pc.replace_substring(flat, old, new)
    if not is_list:
        return pc.fill_null(pc.binary_join_element_wise("s", flat, ""), "\\N")
    flat = pc.binary_join_element_wise("e", flat, "")            # [""] is not []
    offsets = pc.subtract(column.offsets, column.offsets[0]) if len(column) else pa.array([0], pa.int32())
    lists = pa.ListArray.from_arrays(offsets, flat, mask=column.is_null())
    return pc.binary_join_element_wise(pc.fill_null(pc.binary_join(lists, ","), ""), "L", "")
