"""Lines whose questions vary from row to row, read column-wise a case at a time (record/ingest/bulk.py).

A whole-line template (record/ingest/template.py) fixes a line's question set and order, so a file
whose rows each ask their own subset of questions, in their own order, has more line shapes than are
worth learning. A line whose `questions`, `expected` and `answers` hold the same qids in the same order
is read here as one *case template* per qid: the whole-line template of the one-question line made
from it (its other keys kept as they are), typed by DuckDB from the full line (from_json picks the
template's qid and ignores the others). A case's pieces of canonical text (`"<qid>": <value>` in each
of the three maps, and the row's text around them) must each occur in the line, which picks its
template among those learned for its qid and the line's keys; then the line's canonical text is
rebuilt from the row's pieces and its cases' pieces in order, and only a line equal to it byte for
byte is read this way. As for a whole-line template, that equality makes the typed values exactly what
`json.loads` returns (duplicate qids are refused first: json.loads would keep only the last one).
"""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from laya_cases.core import identity as I
from laya_cases.record.decisions import _json
from laya_cases.record.ingest.columns import case_ids, learn
from laya_cases.record.ingest.template import Captures, Template, Unsupported, _sql_text, mask, shape

MAPS = ("questions", "expected", "answers")
MAX_CASE_TEMPLATES = 512
PER_QID = 8                   # templates tried for one qid (each costs a DuckDB query a block)
LEARN = 16                    # templates a block may learn
QUERIES = 32                  # DuckDB queries of templates a block may run besides the one of each qid's first
SAMPLE = 64                   # failed lines a block learns case templates from
_S = pa.string()

#: per line: its top-level keys (as JSON text) and its qids, when the three maps share them in order
KEYS_SQL = """SELECT CAST(to_json(json_keys(line)) AS VARCHAR) AS tk,
  CASE WHEN k[1] = k[2] AND k[2] = k[3] AND len(k[2]) > 0 AND len(list_distinct(k[2])) = len(k[2]) THEN k[2] END AS ek
FROM (SELECT line, json_keys(line, ['$.questions', '$.expected', '$.answers']) AS k FROM (SELECT %s AS line FROM lines))"""


class CaseTemplate:
    """The template of one qid within lines of one set of top-level keys, and its pieces of text."""

    def __init__(self, template: Template, qid: str):
        self.t, self.qid, self.hits, self.misses = template, qid, 0, 0     # cases read in this block
        children = template.root.children
        self.maps = [key for key in children if key in MAPS]        # in the line's order
        self.segments: List[List[Any]] = [[]]     # canonical text parts around the maps
        for i, (key, child) in enumerate(children.items()):
            self.segments[-1].append(("{" if i == 0 else ", ") + _json(key) + ": ")
            if key in MAPS:
                self.segments.append([])
            else:
                self.segments[-1] += child.parts
        self.segments[-1].append("}")
        body, key, ckey = template.questions[qid], _json(qid) + ": ", I._compact(qid) + ":"  # noqa: SLF001
        self.pieces = {"questions": [key + _json(body)], "expected": [key] + children["expected"].children[qid].parts,
                       "answers": [key] + children["answers"].children[qid].parts}
        labelled = [k for k in I.LABELLED_KEYS if k in children]
        self.cmaps = [k for k in labelled if k in MAPS]
        self.csegments: List[List[Any]] = [[]]    # the labelled line's compact text parts around its maps
        for i, k in enumerate(labelled):
            self.csegments[-1].append(("{" if i == 0 else ",") + I._compact(k) + ":")  # noqa: SLF001
            if k in MAPS:
                self.csegments.append([])
            else:
                self.csegments[-1] += children[k].cparts
        self.csegments[-1].append("}")
        self.cpieces = {"questions": [ckey + I._compact(body)],  # noqa: SLF001
                        "expected": [ckey] + children["expected"].children[qid].cparts}


class Read:
    """What one template read: its cases' line positions (in the block), qid positions and captures."""

    def __init__(self, ct: CaseTemplate, lines: np.ndarray, qid_pos: np.ndarray, caps: Captures, case: np.ndarray):
        self.ct, self.lines, self.qid_pos, self.caps, self.case = ct, lines, qid_pos, caps, case


class Split:
    """The lines read case by case: positions, cases per line, labelled lines and question sets."""

    def __init__(self, lines: np.ndarray, counts: np.ndarray, compact: pa.Array, questions: Dict[str, Any],
                 reads: List[Read]):
        self.lines, self.counts, self.compact, self.questions, self.reads = lines, counts, compact, questions, reads


class CaseReader:
    """The case templates learned so far, by (top-level keys, qid); reads a block's lines with them."""

    def __init__(self, con: Any, duck: Callable[[Template, pa.Array], pa.Table], float_text: bool):
        self.con, self.duck, self.float_text = con, duck, float_text
        self.by_key: Dict[Tuple[str, str], List[CaseTemplate]] = {}
        self.known: set = set()              # one-question lines' shapes learned or refused
        self.count = 0
        self.questions_seen: set = set()     # canonical texts of the `questions` objects read so far

    def read(self, lines: pa.Array, todo: np.ndarray) -> Tuple[Optional[Split], np.ndarray]:
        """Read what it can of the lines at `todo`; (the lines read, the positions left)."""
        keys = self._keys(lines if len(todo) == len(lines) else lines.take(pa.array(todo)))   # (todo: sorted)
        ek = keys.column("ek").combine_chunks()
        ok_lines = np.flatnonzero(mask(ek.is_valid()))
        if not len(ok_lines):
            return None, todo
        ek, tk = ek.take(pa.array(ok_lines)), keys.column("tk").combine_chunks().take(pa.array(ok_lines))
        lines_at = todo[ok_lines]
        for every in self.by_key.values():
            for ct in every:
                ct.hits = 0
        split, failed = self._attempt(lines, lines_at, ek, tk)
        most = min(LEARN, max(4, len(lines_at) // 32))        # learning one costs ~4 ms: ~20 lines row by row
        if len(failed) and self._learn(lines, lines_at[failed], tk.take(pa.array(failed)), most):
            split, failed = self._attempt(lines, lines_at, ek, tk)
        self._prune(max(2, len(lines_at) // 200))
        left = np.setdiff1d(todo, split.lines if split is not None else np.empty(0, np.int64))
        return split, left

    def _prune(self, enough: int) -> None:
        """Templates that read fewer than `enough` cases in 3 blocks in a row are tried no more: each costs a DuckDB
        query a block (their shapes stay known, so they are not learned again)."""
        for key, every in self.by_key.items():
            for ct in list(every):
                ct.misses = ct.misses + 1 if ct.hits < enough else 0
                if ct.misses >= 3:
                    every.remove(ct)

    def _keys(self, sub: pa.Array) -> pa.Table:
        import duckdb

        self.con.register("lines", pa.Table.from_arrays([sub], ["line"]))
        try:
            try:
                return self.con.sql(KEYS_SQL % "line").to_arrow_table()
            except duckdb.Error:             # a line that is not JSON
                return self.con.sql(KEYS_SQL % "CASE WHEN json_valid(line) THEN line END").to_arrow_table()
        finally:
            self.con.unregister("lines")

    def _learn(self, lines: pa.Array, failed: np.ndarray, tk: pa.Array, most: int) -> List[Tuple[Tuple[str, str], Any]]:
        """Case templates from a sample of the lines that failed: [((top, qid), template)] learned."""
        learned: List[Tuple[Tuple[str, str], CaseTemplate]] = []
        step = max(1, len(failed) // SAMPLE)
        for pos, top in zip(failed[::step][:SAMPLE].tolist(), tk.to_pylist()[::step][:SAMPLE]):
            try:
                value = json.loads(lines[pos].as_py())
            except (ValueError, RecursionError):
                continue
            for qid in value.get("expected", {}) if isinstance(value, dict) else ():
                if self.count >= MAX_CASE_TEMPLATES or len(learned) >= most:
                    return learned
                try:
                    sub = {k: ({qid: v[qid]} if k in MAPS else v) for k, v in value.items()}
                    known, line = (top, shape(sub)), _json(sub)
                except (TypeError, KeyError, ValueError, RecursionError):
                    continue
                if known in self.known:
                    continue
                self.known.add(known)
                try:
                    ct = CaseTemplate(learn(line), qid)
                except Unsupported:
                    continue
                same = self.by_key.setdefault((top, qid), [])
                if len(same) >= PER_QID or any(_same(ct, other) for other in same):
                    continue
                same.append(ct)
                self.count += 1
                learned.append(((top, qid), ct))
        return learned

    def _attempt(self, lines: pa.Array, lines_at: np.ndarray, ek: pa.Array, tk: pa.Array) -> Tuple[Optional[Split], np.ndarray]:
        """Read each line's cases with the templates of their qids; (the lines read, the indices of the rest)."""
        n = len(ek)
        offsets = np.frombuffer(ek.offsets.buffers()[1], np.int32)[ek.offset:ek.offset + n + 1].astype(np.int64)
        lengths = np.diff(offsets)
        case_line = np.repeat(np.arange(n), lengths)
        qid_pos = np.arange(len(case_line)) - np.repeat(offsets[:-1] - offsets[0], lengths)
        qids = pc.list_flatten(ek)
        group = pc.binary_join_element_wise(tk.take(pa.array(case_line)), qids, "\n").dictionary_encode()
        codes = group.indices.to_numpy(zero_copy_only=False)
        read = np.zeros(len(case_line), dtype=bool)
        reads: List[Read] = []
        names = [name.split("\n", 1) for name in group.dictionary.to_pylist()]
        typed = self._typed(lines, lines_at, tk, sorted({top for top, _ in names}))
        budget = min(QUERIES, max(2, len(lines_at) // 256))    # a query costs ~5 ms: as much as ~50 lines row by row
        for code in np.argsort(-np.bincount(codes, minlength=len(names)), kind="stable").tolist():
            top, qid = names[code]
            todo = np.flatnonzero(codes == code)
            candidates = self.by_key.get((top, qid), [])
            for i, ct in enumerate(candidates):
                pre = typed.get((top, qid)) if i == 0 else None
                if not len(todo) or (pre is None and budget <= 0):
                    break
                last = i == len(candidates) - 1 or budget <= int(pre is None)    # out of queries: the last tried
                budget -= int(pre is None) + int(not last)
                todo = self._read_cases(ct, lines, lines_at, case_line, qid_pos, todo, reads, last, pre)
            read[np.setdiff1d(np.flatnonzero(codes == code), todo)] = True
        whole = np.bincount(case_line[~read], minlength=n) == 0
        return self._assemble(lines, lines_at, case_line, whole, reads)

    def _read_cases(self, ct: CaseTemplate, lines: pa.Array, lines_at: np.ndarray, case_line: np.ndarray,
                    qid_pos: np.ndarray, todo: np.ndarray, reads: List[Read], last: bool,
                    pre: Optional[Tuple[pa.Table, np.ndarray]]) -> np.ndarray:
        """Read the cases at `todo` whose pieces all occur in their line (the `last` template for their
        qid takes them all: no other would, and the line's text is checked whole); the cases left."""
        sub = lines.take(pa.array(lines_at[case_line[todo]])) if pre is None or not last else None
        try:
            caps = Captures(ct.t, self.duck(ct.t, sub) if pre is None else pre[0].take(pa.array(pre[1][case_line[todo]])))
        except Unsupported:
            return todo
        found = mask(caps.valid())
        if not last:
            found = found & self._occur(sub, [caps.text(parts) for parts in ct.segments + [ct.pieces[m] for m in MAPS]])
        if not found.any():
            return todo
        ct.hits += int(found.sum())
        caps = caps if found.all() else caps.filter(found)
        case_ids(caps)
        ok = todo[found]
        reads.append(Read(ct, lines_at[case_line[ok]], qid_pos[ok], caps, ok))
        return todo[~found]

    def _typed(self, lines: pa.Array, lines_at: np.ndarray, tk: pa.Array,
               tops: List[str]) -> Dict[Tuple[str, str], Tuple[pa.Table, np.ndarray]]:
        """The first template of each qid, for each set of top-level keys, typed by one DuckDB query over
        the lines with those keys (a line is parsed once, not once a case): (top, qid) -> (the template's
        columns, the row of each line of `lines_at` in them)."""
        import duckdb

        typed: Dict[Tuple[str, str], Tuple[pa.Table, np.ndarray]] = {}
        for top in tops:
            tree: Dict[str, Any] = {}
            select: Dict[str, str] = {}          # expression -> its column (the row's leaves are shared)
            members = []
            for (t, qid), candidates in self.by_key.items():
                if t == top and candidates and _merge(tree, candidates[0].t.root.duck):
                    members.append((qid, candidates[0].t))
                    for expr, name in candidates[0].t.columns:
                        if self.float_text or name[0] == "g":     # f<i>: DuckDB's float text, if used
                            select.setdefault(expr, "c%d" % len(select))
            at = np.flatnonzero(mask(pc.equal(tk, top)))
            if len(members) < 2:
                continue
            sql = "SELECT %s FROM (SELECT from_json(line, %s) AS j FROM lines)" % (
                ", ".join("%s AS %s" % item for item in select.items()), _sql_text(json.dumps(tree)))
            sub = lines if len(at) == len(lines) else lines.take(pa.array(lines_at[at]))    # (sorted positions)
            self.con.register("lines", pa.Table.from_arrays([sub], ["line"]))
            try:
                table = self.con.sql(sql).to_arrow_table()
            except duckdb.Error:            # (struct names DuckDB takes for one, say): a query per template
                continue
            finally:
                self.con.unregister("lines")
            row = np.full(len(lines_at), -1, dtype=np.int64)
            row[at] = np.arange(len(at))
            for qid, t in members:
                columns = [(expr, name) for expr, name in t.columns if self.float_text or name[0] == "g"]
                typed[(top, qid)] = (table.select([select[e] for e, _ in columns]).rename_columns([n for _, n in columns]),
                                     row)
        return typed

    def _occur(self, sub: pa.Array, texts: List[pa.Array]) -> np.ndarray:
        """Whether every text occurs in its line (DuckDB's contains, column-wise)."""
        names = ["t%d" % i for i in range(len(texts))]
        self.con.register("pieces", pa.Table.from_arrays([sub] + texts, ["line"] + names))
        try:
            test = " AND ".join("contains(line, %s)" % name for name in names)
            found = self.con.sql("SELECT COALESCE(%s, false) FROM pieces" % test).to_arrow_table().column(0)
        finally:
            self.con.unregister("pieces")
        return mask(found)

    def _assemble(self, lines: pa.Array, lines_at: np.ndarray, case_line: np.ndarray, whole: np.ndarray,
                  reads: List[Read]) -> Tuple[Optional[Split], np.ndarray]:
        """Rebuild the canonical text of the lines whose cases were all read; keep those equal to their line."""
        reads = [r for r in reads if whole[case_line[r.case]].any()]
        for r in reads:
            keep = whole[case_line[r.case]]
            if not keep.all():
                r.caps, r.case = r.caps.filter(keep), r.case[keep]
                r.lines, r.qid_pos = r.lines[keep], r.qid_pos[keep]
        chosen = np.flatnonzero(whole)
        if not len(chosen) or not reads:
            return None, np.flatnonzero(~whole)
        case = np.concatenate([r.case for r in reads])
        order = np.argsort(case, kind="stable")     # the cases of the chosen lines, in line and qid order
        starts = np.flatnonzero(np.r_[True, np.diff(case_line[case[order]]) != 0])
        offsets = pa.array(np.r_[starts, len(case)].astype(np.int32))

        def joined(texts: List[pa.Array], sep: str) -> pa.Array:
            return pc.binary_join(pa.ListArray.from_arrays(offsets, pa.concat_arrays(texts).take(pa.array(order))), sep)

        maps = {m: joined([r.caps.text(r.ct.pieces[m]) for r in reads], ", ") for m in MAPS}
        cmaps = {m: joined([r.caps.text(r.ct.cpieces[m]) for r in reads], ",") for m in ("questions", "expected")}
        text, compact = self._row_texts(reads, case, order, starts, maps, cmaps)
        line_pos = lines_at[chosen]
        equal = mask(pc.equal(text, lines.take(pa.array(line_pos)))) & self._rows_agree(reads, order, starts)
        failed = np.sort(np.r_[np.flatnonzero(~whole), chosen[~equal]])
        if not equal.any():
            return None, failed
        good_lines = chosen[equal]
        counts = np.bincount(case_line, minlength=len(whole))[good_lines]
        for r in reads:
            keep = np.isin(case_line[r.case], good_lines)
            if not keep.all():
                r.caps, r.case, r.lines, r.qid_pos = r.caps.filter(keep), r.case[keep], r.lines[keep], r.qid_pos[keep]
        reads = [r for r in reads if len(r.case)]
        questions = pc.binary_join_element_wise("{", maps["questions"], "}", "").filter(pa.array(equal))
        return Split(line_pos[equal], counts, compact.filter(pa.array(equal)), self._question_sets(questions),
                     reads), failed

    @staticmethod
    def _rows_agree(reads: List[Read], order: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Per chosen line, whether every case's template reads the row's own text (state, language, tags,
        ...) as its first case's does: the line's text is rebuilt from the first one's, and each case's
        row columns and case id come from its own (a template learned from a line whose state was null
        holds a literal null state)."""
        rows = pa.concat_arrays([pc.binary_join_element_wise(*[r.caps.text(seg) for seg in r.ct.segments], "\x00")
                                 for r in reads]).take(pa.array(order))
        line_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(order)]))
        same = mask(pc.equal(rows, rows.take(pa.array(starts[line_of]))))
        return np.logical_and.reduceat(same, starts)

    def _question_sets(self, questions: pa.Array) -> Dict[str, Any]:
        """{json.dumps(questions): questions} for each `questions` object not seen in an earlier block
        (recorder.note_row's key)."""
        sets: Dict[str, Any] = {}
        for text in questions.unique().to_pylist():
            if text not in self.questions_seen:
                self.questions_seen.add(text)
                value = json.loads(text)
                sets.setdefault(json.dumps(value, sort_keys=False, default=str), value)
        return sets

    def _row_texts(self, reads: List[Read], case: np.ndarray, order: np.ndarray, starts: np.ndarray,
                   maps: Dict[str, pa.Array], cmaps: Dict[str, pa.Array]) -> Tuple[pa.Array, pa.Array]:
        """Each chosen line's canonical text and labelled line (with its LF), from its first case's template."""
        first = order[starts]                     # index (into `case`) of each line's first case
        which = np.repeat(np.arange(len(reads)), [len(r.case) for r in reads])[first]
        local = (first - np.r_[0, np.cumsum([len(r.case) for r in reads])][:-1][which])
        texts, compacts, where = [], [], []
        for i, r in enumerate(reads):
            at = np.flatnonzero(which == i)
            if not len(at):
                continue
            caps = r.caps.filter(np.isin(np.arange(len(r.case)), local[at]))
            picked = pa.array(at)
            parts: List[Any] = []
            for j, segment in enumerate(r.ct.segments):
                parts += [caps.text(segment)] + (["{", maps[r.ct.maps[j]].take(picked), "}"] if j < len(r.ct.maps) else [])
            cparts: List[Any] = []
            for j, segment in enumerate(r.ct.csegments):
                cparts += [caps.text(segment)] + (["{", cmaps[r.ct.cmaps[j]].take(picked), "}"]
                                                  if j < len(r.ct.cmaps) else ["\n"])
            texts.append(pc.binary_join_element_wise(*parts, ""))
            compacts.append(pc.binary_join_element_wise(*cparts, ""))
            where.append(at)
        back = pa.array(np.argsort(np.concatenate(where), kind="stable"))
        return pa.concat_arrays(texts).take(back), pa.concat_arrays(compacts).take(back)


def _merge(into: Dict[str, Any], tree: Dict[str, Any]) -> bool:
    """Merge a DuckDB structure into `into`; False (nothing merged) where a key would get two types."""
    def fits(a: Any, b: Any) -> bool:
        if isinstance(a, dict) and isinstance(b, dict):
            return all(k not in a or fits(a[k], v) for k, v in b.items())
        return a == b

    def merge(a: Dict[str, Any], b: Dict[str, Any]) -> None:
        for k, v in b.items():
            if k in a and isinstance(v, dict):
                merge(a[k], v)
            elif k not in a:
                a[k] = json.loads(json.dumps(v))

    if not fits(into, tree):
        return False
    merge(into, tree)
    return True


def _same(a: CaseTemplate, b: CaseTemplate) -> bool:
    return a.t.structure == b.t.structure and a.t.root.parts == b.t.root.parts
