"""Column-wise `ingest`: an answers file read in blocks, canonical lines through learned templates
(record/ingest/template.py, record/ingest/columns.py, record/ingest/cases.py), lines of any other spelling
through the loose reader (record/ingest/loose.py), what neither reads through the per-row path
(record/ingest/answers.py).

All paths feed one ordered stream: per block, their rows are merged in line order before the
order-dependent facts are assigned (case-id repeat numbers, slice-set ids, the labelled-rows digest), and
the decision rows reach the staging area in the same batches the per-row path would have flushed. Memory
holds two blocks (BLOCK_BYTES; the next one is parsed on a thread) plus the batch being filled, and the
run's case digests at 10 bytes each (record/ingest/ids.py).

A file that is not valid UTF-8 or holds a carriage return, or whose first block no column-wise reader
reads, is read by the per-row path from its start (`Fallback`), so its errors and line numbers are that
path's.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.core.errors import UsageError
from laya_cases.core import jsontext
from laya_cases.core.dataset import Row, check_row
from laya_cases.record.decisions import DecisionBuffer
from laya_cases.record.ingest.blocks import Fallback, read_blocks
from laya_cases.record.ingest.cases import CaseReader, Split
from laya_cases.record.ingest.columns import build, case_ids, learn
from laya_cases.record.ingest.ids import CaseNumbers, from_hex
from laya_cases.record.ingest.loose import Loose, LooseReader
from laya_cases.record.ingest.slicesets import slice_sets
from laya_cases.record.ingest.template import Captures, Template, Unsupported, mask, shape, writes_repr
from laya_cases.record.recorder import FLUSH_EVERY, RunRecorder
from laya_cases.store.schema import DECISION_SCHEMA

BLOCK_BYTES = 8 << 20         # a block's working set is ~50x this; the file itself is never held
MAX_TEMPLATES = 64
SAMPLE = 256                  # lines whose shapes pick the next template to learn
PROBE_EVERY = 8               # a block the templates barely read: the next 7 go to the loose reader untried


class RawBuffer(DecisionBuffer):
    """The per-row path's buffer, leaving case-id numbers and slice-set ids to the merged stream."""

    def _number(self, digest: str) -> str:
        return digest

    def _slice_set(self, combo: tuple) -> Optional[int]:
        return None


def _braced(lines: pa.Array) -> np.ndarray:
    return mask(pc.and_(pc.starts_with(lines, "{"), pc.ends_with(lines, "}")))


class BulkIngest:
    """Feeds one answers file into `recorder` (whose buffer becomes a RawBuffer)."""

    def __init__(self, recorder: RunRecorder, path: str, record_row: Callable[[RunRecorder, Row], None], *,
                 blocks: Optional[Iterator[pa.Array]] = None, finish: Optional[Callable[[pa.Table], pa.Table]] = None,
                 templates: bool = True):
        """`blocks`: the lines, a block at a time, when they are not the file at `path` (an import's answers
        lines; `path` then only names them); `finish(decision rows of one block)`: the rows as stored;
        `templates`: False for lines no template reads (DuckDB's compact text): every block goes to the
        loose reader untried."""
        self.rec, self.path, self.record_row = recorder, path, record_row
        self.blocks, self.finish, self.use_templates = blocks, finish, templates
        self.raw = recorder.buffer = RawBuffer()
        self.templates: List[Template] = []
        self.rejected: set = set()
        self.pending: List[pa.Table] = []
        self.pending_rows = 0
        self.slice_sets: Dict[str, int] = {}
        self.numbers = CaseNumbers()         # case-id repeat counts (the buffer's own stay unused)
        self.index = 0
        self.con: Any = None
        self.cases: Any = None               # the case templates (a CaseReader once DuckDB is connected)
        self.loose: Any = None               # any other spelling (a LooseReader once DuckDB is connected)
        self.float_text = False
        self.writer: Any = None
        self.writing: Any = None
        self.fast_rows = 0                   # rows read through a template (the rest: the per-row path)
        self.skip = 0                        # blocks left that go row by row without trying the templates
        self.matched_blocks = 0              # blocks matched so far (by any reader)

    def run(self, progress: Optional[Callable[[int], None]] = None) -> None:
        """Block i+1 is read and parsed (a thread: DuckDB and Arrow let go of the GIL) while block i
        becomes decision rows and block i-1 is written to Parquet (another thread)."""
        from concurrent.futures import ThreadPoolExecutor

        blocks = read_blocks(self.path, BLOCK_BYTES) if self.blocks is None else self.blocks
        line_no, reader = 0, ThreadPoolExecutor(1)

        def read() -> Optional[tuple]:
            lines = next(blocks, None)
            return None if lines is None else (lines, self._match(lines))

        try:
            ahead = reader.submit(read)
            while True:
                block = ahead.result()
                if block is None:
                    break
                ahead = reader.submit(read)
                self._block(block[0], line_no, block[1])
                line_no += len(block[0])
                if progress:
                    progress(self.rec.n_rows)
            if self.index == 0:
                raise UsageError("%s contains no examples" % self.path)
            self._write()
        except BaseException:
            reader.shutdown(wait=True)       # nothing runs on once the error is raised
            if self.writing is not None:     # the staging area is not left while a batch is being written
                self.writer.shutdown(wait=True)
            raise
        reader.shutdown()
        if self.writing is not None:
            self.writing.result()
            self.writer.shutdown()

    def _match(self, lines: pa.Array) -> Tuple[List[Tuple[Template, np.ndarray, Any]], Optional[Split], Optional[Loose]]:
        """(template, line positions, captures) for each whole-line template that read lines, the lines
        read case by case (record/ingest/cases.py), and the lines read by the loose reader
        (record/ingest/loose.py): every line a template did not read.

        A file whose lines are not what json.dumps writes (other spacing, key orders, float spellings)
        leaves nearly every line to the loose reader, and trying the templates on each block would cost
        more than that reader. So the templates first read a sample of SAMPLE lines of a large block: if
        they read less than 1/16 of it, the loose reader reads the block, as it does the next
        PROBE_EVERY - 1 blocks; the one after probes again. A first block that neither reads sends the
        whole file to the per-row path (Fallback: faster than this one's merging)."""
        self._connect()
        if self.skip or not self.use_templates:
            self.skip = max(0, self.skip - 1)
            return [], None, self._loose(lines, np.flatnonzero(_braced(lines)))
        if len(lines) >= 4 * SAMPLE and not self._readable(lines.take(pa.array(range(0, len(lines),
                                                                                     len(lines) // SAMPLE)))):
            self.skip = PROBE_EVERY - 1
            loose = self._loose(lines, np.flatnonzero(_braced(lines)))
            if not self.matched_blocks and (loose is None or len(loose.lines) * 16 < len(lines)):
                raise Fallback("lines the column-wise readers do not read")     # the whole file: the per-row path
            self.matched_blocks += 1
            return [], None, loose
        self.matched_blocks += 1
        found, split, todo = self._match_all(lines)
        return found, split, self._loose(lines, todo)

    def _loose(self, lines: pa.Array, todo: np.ndarray) -> Optional[Loose]:
        return self.loose.read(lines, todo)[0] if len(todo) else None

    def _readable(self, sample: pa.Array) -> bool:
        """Whether the templates (learning as they go) read at least 1/16 of a sample of the block."""
        found, split, _todo = self._match_all(sample)
        read = sum(len(pos) for _t, pos, _c in found) + (0 if split is None else len(split.lines))
        return read * 16 >= len(sample)

    def _match_all(self, lines: pa.Array) -> Tuple[List[Tuple[Template, np.ndarray, Any]], Optional[Split], np.ndarray]:
        todo = np.flatnonzero(_braced(lines))
        found: List[Tuple[Template, np.ndarray, Any]] = []
        for template in list(self.templates):
            if len(todo):
                todo = self._read(template, lines, todo, found)
        misses = 0                           # learn while learning pays: a template must read many lines
        while len(todo) and misses < 3:
            template = self._learn(lines, todo)
            if template is None:
                break
            before = len(todo)
            todo = self._read(template, lines, todo, found)
            if before - len(todo) < min(before, max(8, len(lines) // 100)):
                misses += 1
                if before - len(todo) <= 1:
                    self.templates.remove(template)
        split = None
        if len(todo):
            split, todo = self.cases.read(lines, todo)
        return found, split, todo

    def _read(self, template: Template, lines: pa.Array, todo: np.ndarray, found: list) -> np.ndarray:
        """Read the lines at `todo` the template matches (appended to `found`); the positions left."""
        sub = lines if len(todo) == len(lines) else lines.take(pa.array(todo))
        try:
            caps = Captures(template, self._duck(template, sub))
        except Unsupported:
            return todo
        ok = caps.ok(sub)
        if not ok.any():
            return todo
        caps = caps if ok.all() else caps.filter(ok)
        case_ids(caps)                       # here, in the reading thread
        found.append((template, todo[ok], caps))
        return todo[~ok]

    def _duck(self, template: Template, lines: pa.Array) -> pa.Table:
        import duckdb

        self._connect()
        # a registered view, not a relation's query(): ~9 ms less per block in DuckDB 2.0's Python layer
        self.con.register("lines", pa.Table.from_arrays([lines], ["line"]))
        try:
            table = self.con.sql(template.sql % "from_json(line, %s)" % template.structure).to_arrow_table()
        except duckdb.Error:                 # a line that is not JSON: only valid lines are parsed
            sql = "CASE WHEN json_valid(line) THEN from_json(line, %s) END" % template.structure
            try:
                table = self.con.sql(template.sql % sql).to_arrow_table()
            except duckdb.Error:
                raise Unsupported("duckdb") from None     # these lines go through the per-row path
        finally:
            self.con.unregister("lines")     # the block is not held past its query
        return table if self.float_text else table.select(["g%d" % i for i in range(len(template.kinds))])

    def _connect(self) -> None:
        import duckdb

        if self.con is None:
            self.con = duckdb.connect()
            self.float_text = writes_repr(self.con)    # else Arrow writes the float text (Captures)
            self.cases = CaseReader(self.con, self._duck, self.float_text)
            self.loose = LooseReader(self.con)

    def _learn(self, lines: pa.Array, todo: np.ndarray) -> Optional[Template]:
        """A template for the commonest shape among a sample of the lines left (None: no shape repeats)."""
        if len(self.templates) >= MAX_TEMPLATES:
            return None
        sample = todo[:: max(1, len(todo) // SAMPLE)][:SAMPLE].tolist()
        groups: Dict[Any, List[str]] = {}
        for pos in sample:
            line = lines[pos].as_py()
            try:
                groups.setdefault(shape(json.loads(line)), []).append(line)
            except (ValueError, RecursionError):
                continue
        for kind, members in sorted(groups.items(), key=lambda item: -len(item[1])):
            if len(members) < (max(2, len(sample) // 16) if len(todo) >= 16 else 1):   # else: case by case
                break
            if kind in self.rejected:
                continue
            try:
                template = learn(members[0])
            except Unsupported:
                try:
                    template = learn(members[-1])
                except Unsupported:
                    self.rejected.add(kind)
                    continue
            self.templates.append(template)
            return template
        return None

    def _block(self, lines: pa.Array, first: int, matched: Tuple[List[Tuple[Template, np.ndarray, Any]], Optional[Split],
                                                                 Optional[Loose]]) -> None:
        n, (found, split, loose) = len(lines), matched
        fast, counts = np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
        for template, pos, _ in found:
            fast[pos] = True
            counts[pos] = len(template.root.children["expected"].children)
        if split is not None:
            fast[split.lines], counts[split.lines] = True, split.counts
        if loose is not None:
            fast[loose.lines], counts[loose.lines] = True, loose.counts
        kept = fast.copy()
        stripped: Dict[int, str] = {}
        for pos in np.flatnonzero(~fast).tolist():
            text = lines[pos].as_py().strip()
            if text and not text.startswith("#"):
                kept[pos] = True
                stripped[pos] = text
        row_index = self.index + np.cumsum(kept) - 1
        tables, compact, where = [], [], []
        for template, pos, caps in found:
            tables.append(build(caps, pa.array(pos + first + 1, pa.int64()), pa.array(row_index[pos], pa.int64())))
            compact.append(caps.text(template.labelled_parts + ["\n"]))
            where.append(pos)
            self.rec._question_sets.setdefault(template.questions_key, template.questions)  # noqa: SLF001
        if split is not None:                # a one-question template's rows: their qid's place in the line
            qid_pos = DECISION_SCHEMA.get_field_index("qid_pos")
            for r in split.reads:
                table = build(r.caps, pa.array(r.lines + first + 1, pa.int64()), pa.array(row_index[r.lines], pa.int64()))
                tables.append(table.set_column(qid_pos, "qid_pos", pa.array(r.qid_pos, pa.int64())))
            compact.append(split.compact)
            where.append(split.lines)
            for key, questions in split.questions.items():
                self.rec._question_sets.setdefault(key, questions)  # noqa: SLF001
        if loose is not None:
            tables.append(loose.table(first, row_index))
            compact.append(loose.compact)
            where.append(loose.lines)
            for key, questions in loose.questions.items():
                self.rec._question_sets.setdefault(key, questions)  # noqa: SLF001
        if where:                            # the fast rows' digest lines, in line order
            order = np.argsort(np.concatenate(where), kind="stable")
            compact = pa.concat_arrays(compact).take(pa.array(order))
        self._rows_in_order(first, stripped, row_index, np.flatnonzero(fast), compact, counts)
        self.fast_rows += int(fast.sum())
        self.raw.n_cases += int(counts[fast].sum())
        tables.append(pa.Table.from_batches([self.raw.take()]))
        self.index += int(kept.sum())
        merged = pa.concat_tables(tables)
        if len(tables) != 2 or split is not None or tables[-1].num_rows:   # one reader alone is in line order
            merged = merged.take(pc.sort_indices(merged, [("line_no", "ascending"), ("qid_pos", "ascending")]))
        merged = self._ordered(merged)
        self._queue(merged if self.finish is None else self.finish(merged), counts[kept])

    def _rows_in_order(self, first: int, stripped: Dict[int, str], row_index: np.ndarray, fast: np.ndarray,
                       compact: Any, counts: np.ndarray) -> None:
        """The labelled-rows digest and the per-row path in line order (runs of template rows at once)."""
        rec, digest = self.rec, self.rec._labelled._digest       # noqa: SLF001 -- same digest, in order
        offsets = (np.frombuffer(compact.buffers()[1], dtype=np.int32)[compact.offset:compact.offset + len(compact) + 1]
                   if len(fast) else None)
        data = compact.buffers()[2] if len(fast) else None
        done = 0
        for pos in sorted(stripped) + [None]:
            upto = len(fast) if pos is None else int(np.searchsorted(fast, pos))
            if upto > done:
                digest.update(memoryview(data)[offsets[done]:offsets[upto]])
                rec.note_inputs(pa.array(row_index[fast[done:upto]], pa.int64()),   # the lines less their LF
                                pc.utf8_slice_codeunits(compact.slice(done, upto - done), 0, -1))
                rec.n_rows += upto - done
                done = upto
            if pos is None:
                return
            counts[pos] = self._slow_row(first, pos, stripped[pos], int(row_index[pos]))

    def _slow_row(self, first: int, pos: int, text: str, index: int) -> int:
        """One line through the per-row path (dataset.iter_lines, check_row, note_row, ingest's row)."""
        where = "%s:%d" % (self.path, first + pos + 1)
        try:
            value = jsontext.loads(text)
        except jsontext.TooManyDigits as exc:
            raise UsageError("%s %s" % (where, exc)) from None
        except ValueError as exc:
            raise UsageError("%s is not valid JSON: %s" % (where, exc)) from None
        except RecursionError as exc:
            raise UsageError("%s cannot be read: %s" % (self.path, exc)) from None
        row = Row(index=index, line_no=first + pos + 1, raw=value, tags=check_row(value, where))
        before = len(self.raw)
        self.rec.note_row(row)
        self.record_row(self.rec, row)
        return len(self.raw) - before

    def _ordered(self, table: pa.Table) -> pa.Table:
        """Case-id repeat numbers and slice-set ids, in line order, continuing the run's."""
        column = table.column("case_id").combine_chunks()
        numbers = self.numbers.number(from_hex(column))
        if numbers:                                                        # repeats: `<digest>#<n>`
            where = np.flatnonzero(mask(column.is_valid()))[list(numbers)]
            ids = ["%s#%d" % (column[int(i)].as_py(), n) for i, n in zip(where, numbers.values())]
            column = pc.replace_with_mask(column, pa.array(np.isin(np.arange(len(column)), where)),
                                          pa.array(ids, pa.string()))
            table = table.set_column(table.schema.get_field_index("case_id"), "case_id", column)
        return table.set_column(table.schema.get_field_index("slice_set"), "slice_set", self._slice_sets(table))

    def _slice_sets(self, table: pa.Table) -> pa.Array:
        return slice_sets(table, self.slice_sets)

    def _queue(self, table: pa.Table, counts: np.ndarray) -> None:
        """Cut where the per-row path would have flushed (after the row that fills FLUSH_EVERY)."""
        ends = np.cumsum(counts)
        base = 0
        while True:
            row = int(np.searchsorted(ends, base + FLUSH_EVERY - self.pending_rows))
            if row >= len(ends):
                break
            self.pending.append(table.slice(base, int(ends[row]) - base))
            base = int(ends[row])
            self._write()
        if table.num_rows > base:
            self.pending.append(table.slice(base))
            self.pending_rows += table.num_rows - base

    def _write(self) -> None:
        if not self.pending:
            return
        table = pa.concat_tables(self.pending)
        self.pending, self.pending_rows = [], 0
        if table.num_rows:                   # Parquet encoding overlaps the next block (one batch at a time)
            if self.writing is None:
                from concurrent.futures import ThreadPoolExecutor

                self.writer = ThreadPoolExecutor(1)
            else:
                self.writing.result()
            self.writing = self.writer.submit(self.rec._staged.write, table)  # noqa: SLF001 -- one row group
