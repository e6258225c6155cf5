"""lm-eval samples files read column-wise: the import of a large log at `ingest`'s speed (issue 31).

Each samples line becomes the answers-file line of the row lmeval_rows.py choice_row would build
(sql/imports/lmeval_lines.sql, one DuckDB query a block), and `ingest`'s column-wise reader records those
lines (record/ingest/bulk.py), so an import and an ingest share one definition of every decision column.
What an answers line cannot say is set on the decision rows afterwards: the samples file's line number and
the log-likelihoods (`logits`).

Generation tasks are read alike (sql/imports/lmeval_generated.sql, generated_row's rules); their decisions
get no confidence afterwards, as generated_row's. A run is read here only while every line is one the
queries read as the per-row reader does; any other line (an unusual value, another output type, a bad
line) raises `Fallback`, and the run is imported row by row, which also names any error.
"""
from __future__ import annotations

import json
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Deque, Iterator, Optional, Tuple

import duckdb
import numpy as np
import pyarrow as pa
from duckdb import sqltypes

from laya_cases.imports.lmeval_rows import NORMS
from laya_cases.query import sql as sqlfiles
from laya_cases.record.ingest.answers import record_answers_row
from laya_cases.record.ingest.blocks import Fallback, read_blocks
from laya_cases.record.ingest.bulk import BulkIngest
from laya_cases.record.recorder import RunRecorder
from laya_cases.store.schema import DECISION_SCHEMA

BLOCK_BYTES = 16 << 20        # samples lines are ~1.5 KB: a block is ~10,000 of them
#: output type -> the query that reads its samples lines
_SQL = {"multiple_choice": "imports/lmeval_lines.sql", "generate_until": "imports/lmeval_generated.sql"}
#: a generation's decision has no confidence (lmeval_rows.generated_row)
_NO_CONFIDENCE = ("confidence", "confidence_source", "gate_confidence")


def _loads_ok(lines: Any) -> pa.Array:
    """Whether json.loads reads each line (DuckDB reads a trailing comma json.loads refuses)."""
    out = []
    for line in lines.to_pylist():
        try:
            json.loads(line)
            out.append(True)
        except (ValueError, RecursionError):
            out.append(False)
    return pa.array(out, pa.bool_())


def _connect() -> Any:
    con = duckdb.connect()
    con.create_function("lc_loads_ok", _loads_ok, [sqltypes.VARCHAR], sqltypes.BOOLEAN, type="arrow", side_effects=False)
    con.execute(sqlfiles.text("ingest/json_values.sql"))
    con.execute(sqlfiles.text("imports/lmeval_values.sql"))
    return con


def _ahead(blocks: Iterator[pa.Array]) -> Iterator[pa.Array]:
    """The blocks, the next one made on a thread of its own while the caller reads this one (the ingest
    reader's query and this file's overlap; DuckDB lets go of the GIL)."""
    with ThreadPoolExecutor(1) as pool:
        coming = pool.submit(next, blocks, None)
        while True:
            block = coming.result()
            if block is None:
                return
            coming = pool.submit(next, blocks, None)
            yield block


class Columnwise:
    """Records one lm-eval Results (lmeval.Results) into a recorder, or raises Fallback."""

    def __init__(self, results: Any):
        self.results = results
        # a block's (first row index, line_no, logits, whether its rows are generations)
        self.side: Deque[Tuple[int, pa.Array, pa.Array, bool]] = deque()
        self.rows = 0

    def record(self, recorder: RunRecorder, progress: Optional[Callable[[int], None]] = None) -> None:
        if any(task.output_type not in _SQL for task in self.results.tasks.values()):
            raise Fallback("a task of another output type")
        BulkIngest(recorder, self.results.path, record_answers_row, blocks=_ahead(self._blocks()),
                   finish=self._finish, templates=False).run(progress)

    def _blocks(self) -> Iterator[pa.Array]:
        con = _connect()
        results = self.results
        for name in sorted(results.samples):
            task, path, first = results.tasks[name], results.samples[name], 0
            query = _SQL[task.output_type]
            given = {"task": task.name, "qid": task.qid, "language": task.language, "item_field": results.item_field,
                     "delimiter": task.delimiter, "norm": results.norm, "metric": NORMS[results.norm]}
            params = {name: given[name] for name in sqlfiles.header_params(query)}   # what the file declares
            for lines in read_blocks(path, BLOCK_BYTES):
                table = pa.table({"line_no": pa.array(np.arange(first + 1, first + len(lines) + 1)), "line": lines})
                # four batches: DuckDB scans an Arrow table a batch per thread
                con.register("lines", pa.Table.from_batches(table.to_batches(max_chunksize=len(lines) // 4 + 1)))
                try:
                    out = sqlfiles.arrow(con, query, params)
                except duckdb.Error as exc:      # a line DuckDB cannot parse: the per-row path reads the run
                    raise Fallback("%s: %s" % (path, exc)) from None
                finally:
                    con.unregister("lines")
                first += len(lines)
                if not out.num_rows:
                    continue
                if not (np.diff(out.column("line_no").to_numpy()) > 0).all():   # never seen: DuckDB keeps order
                    out = out.sort_by("line_no")
                if not all(out.column("ok").to_pylist()):
                    raise Fallback("%s: a line the column-wise reader does not read as the per-row one does" % path)
                self.side.append((self.rows, out.column("line_no").combine_chunks(), out.column("logits").combine_chunks(),
                                  task.output_type == "generate_until"))
                self.rows += out.num_rows
                yield out.column("answers").combine_chunks()

    def _finish(self, table: pa.Table) -> pa.Table:
        """One block's decision rows as the per-row import stores them: the samples file's line numbers, the
        log-likelihoods, and no confidence for a generation."""
        first, line_no, logits, generations = self.side.popleft()
        at = pa.array(table.column("row_index").to_numpy() - first)
        for name, values in (("line_no", line_no), ("logits", logits)):
            table = table.set_column(table.schema.get_field_index(name), DECISION_SCHEMA.field(name),
                                     values.take(at).cast(DECISION_SCHEMA.field(name).type))
        for name in _NO_CONFIDENCE if generations else ():
            field = DECISION_SCHEMA.field(name)
            table = table.set_column(table.schema.get_field_index(name), field, pa.nulls(table.num_rows, field.type))
        return table
