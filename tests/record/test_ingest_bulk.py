"""Column-wise ingest (laya_cases/record/ingest/bulk.py) stores exactly what the per-row path stores.

Every answers file here is ingested twice into one warehouse, `bulk=True` (templates + per-row
fallback) and `bulk=False` (the per-row path only), and the two runs are compared cell by cell:
every decision column (NaN equal to NaN, -0.0 apart from 0.0), the run row (identity digests
included), the slice-set table and the Parquet row-group layout. A bad line must give the same one
error either way. The seeded generator mixes every answer type, ties, repeats, NaN/Infinity tokens,
missing fields, escapes, odd types, comment/blank lines and non-canonical spellings, and the tests
check that the template path really read most of the lines (so a path that always falls back fails).
"""
from __future__ import annotations

import json
import math
import random
import re
import struct
from pathlib import Path
from typing import Any, List

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import ROOT, same_value as _same, stored_run as _runs
from laya_cases.core.errors import UsageError
from laya_cases.record.ingest import bulk as ingest_bulk
from laya_cases.record import recorder as record
from laya_cases.record.ingest.answers import ingest
from laya_cases.record.ingest.columns import learn
from laya_cases.record.ingest.template import Unsupported
from laya_cases.store.warehouse import Warehouse

INPUTS = sorted((ROOT / "tests" / "golden" / "inputs").glob("*.answers.jsonl"))   # the spec fixtures' answers


def ingest_both(tmp_path: Path, path: Path, monkeypatch=None) -> int:
    """Ingest through both paths, assert every stored cell agrees; returns the rows the templates read."""
    wh = Warehouse(str(tmp_path / "wh"))
    seen: List[ingest_bulk.BulkIngest] = []
    original = ingest_bulk.BulkIngest.run

    def spy(self, *args, **kwargs):
        seen.append(self)
        return original(self, *args, **kwargs)

    inputs: List[pa.Table] = []               # the inputs each path would hand the store (store/inputs.py)
    original_commit = record.RunRecorder.commit

    def spy_commit(self, **run):
        inputs.append(self.inputs())
        return original_commit(self, **run)

    ingest_bulk.BulkIngest.run, record.RunRecorder.commit = spy, spy_commit
    try:
        ingest(wh, str(path), run_id="bulk", bulk=True)
        ingest(wh, str(path), run_id="rows", bulk=False)
    finally:
        ingest_bulk.BulkIngest.run, record.RunRecorder.commit = original, original_commit
    assert inputs[0].equals(inputs[1])
    assert inputs[1]["row_index"].to_pylist() == list(range(inputs[1].num_rows))
    (bulk, bulk_layout, bulk_run, bulk_sets), (rows, rows_layout, rows_run, rows_sets) = \
        _runs(wh, "bulk"), _runs(wh, "rows")
    assert bulk_run == rows_run
    assert bulk_sets == rows_sets
    assert bulk_layout == rows_layout
    assert bulk.schema == rows.schema and bulk.num_rows == rows.num_rows
    for name in rows.column_names:
        a, b = bulk.column(name).to_pylist(), rows.column(name).to_pylist()
        bad = [i for i in range(len(a)) if not _same(a[i], b[i])]
        assert not bad, "%s differs at row %d: %r vs %r" % (name, bad[0], a[bad[0]], b[bad[0]])
    return seen[0].fast_rows if seen else 0


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_golden_answers_files_store_the_same_cells(tmp_path, path):
    assert ingest_both(tmp_path, path) > 0


# --- a seeded generator -------------------------------------------------------------------------
BODIES = {
    "intent": {"type": "choice", "instructions": "Which intent?", "criteria": {"refund": "money back",
                                                                               "cancel": "", "other": None}},
    "spam": {"type": "noul", "instructions": "Is this spam?"},
    "urgency": {"type": "score", "instructions": "0-2", "criteria": ["low", "mid", "high"]},
    "pick": {"type": "choice", "instructions": {"text": "pick"}, "criteria": [["a", "first"], ["b", "second"]]},
}
STATES = ["order never arrived", "line\nbreak", 'quote " and \\ slash', "caf\u00e9 \u2603 \U0001F600", "tab\tand\x01ctl",
          "", "same state", "same state"]
FLOATS = [0.0, -0.0, 1.0, 0.5, 0.25, 0.1, 2.0, 1e-05, 3.2e-07, 1e16, 123456789.125, 0.3333333333333333, 0.75]


def _float(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.55:
        return rng.random()
    if r < 0.85:
        return rng.choice(FLOATS)                  # ties and awkward spellings
    if r < 0.9:
        return rng.choice([0, 1, 2, -3, 10 ** 15, 10 ** 20])
    if r < 0.93:
        return rng.choice([float("nan"), float("inf")])
    return rng.choice([True, False]) if r < 0.96 else None


def _answer(rng: random.Random, qid: str) -> dict:
    kind = BODIES[qid]["type"] if rng.random() < 0.9 else rng.choice(["choice", "noul", "score", "other", None])
    answer: dict = {} if kind is None else {"type": kind}
    for key in ("answer_confidence", "confidence"):
        if rng.random() < 0.45:
            answer[key] = _float(rng)
    if kind == "choice":
        if rng.random() < 0.9:
            answer["choice"] = rng.choice(["refund", "cancel", "other", "a", "b", None, 3, "caf\u00e9", "x\ny"])
        if rng.random() < 0.6:
            labels = ["refund", "cancel", "other", "a", "b"]
            answer["probabilities"] = {k: rng.choice([rng.random(), rng.choice(FLOATS), 1]) for k in
                                       rng.sample(labels, rng.randint(0, 3))}
    elif kind == "noul" and rng.random() < 0.9:
        answer["noul"] = rng.choice([rng.random(), 0.5, 1, 0, True, False, rng.choice(FLOATS)])
    elif kind == "score" and rng.random() < 0.9:
        answer["score"] = rng.choice([rng.random() * 2, 1, 2, 0.5, rng.choice(FLOATS)])
    if rng.random() < 0.05:
        answer["abstention"] = rng.choice(["unsure", "\u00e9", 1])
    if rng.random() < 0.3:
        answer = dict(reversed(list(answer.items())))          # another key order: another template
    return answer


def _label(rng: random.Random, qid: str) -> Any:
    if rng.random() < 0.08:
        return rng.choice([None, 1, 1.5, True, "refund", ["x"], {"k": 1}])
    return {"intent": lambda: rng.choice(["refund", "cancel", "other"]), "spam": lambda: rng.random() < 0.3,
            "urgency": lambda: rng.choice([0, 1, 2, 1.0, 0.5]), "pick": lambda: rng.choice(["a", "b"])}[qid]()


def _row(rng: random.Random, i: int) -> dict:
    qids = rng.sample(sorted(BODIES), rng.randint(1, 3)) if rng.random() < 0.3 else ["intent", "spam", "urgency"]
    row: dict = {"state": rng.choice(STATES) if rng.random() < 0.5 else "message %d" % (i % 500)}
    if rng.random() < 0.03:
        row["state"] = rng.choice([{"text": "object state", "n": 2}, ["a", 1], 7])
    row["questions"] = {q: BODIES[q] for q in sorted(set(qids) | ({"spam"} if rng.random() < 0.2 else set()))}
    row["expected"] = {q: _label(rng, q) for q in qids}
    for key, values in (("language", ["en", "fr", "de", None, 3, "\u00e9s"]), ("model", ["m1", "m2", "", None]),
                        ("item_id", ["it-%d" % (i % 50), i, None]),
                        ("source_item_id", ["s-%d" % (i % 30), i % 7, None, "\u00e9"])):
        if rng.random() < 0.7:
            row[key] = rng.choice(values)
    if rng.random() < 0.8:
        row["tags"] = rng.choice([[], ["vip"], ["vip", "hard"], ["a,b", "c|d"], [""], None, ["x\\y"], [1]])
    row["answers"] = {q: _answer(rng, q) for q in qids}
    if rng.random() < 0.9:
        row["latency_ms"] = rng.choice([12.5, 0, 3, rng.random() * 100, None])
    return row


def _line(rng: random.Random, row: dict) -> str:
    r = rng.random()
    if r < 0.9:
        return json.dumps(row, ensure_ascii=False)
    if r < 0.94:
        return json.dumps(row)                                   # \u escapes: not canonical
    if r < 0.97:
        return json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    return "  " + json.dumps(row, ensure_ascii=False) + " "


def _vary(rng: random.Random, value: Any) -> Any:
    """The same shape (keys, order, leaf types) with new leaf values."""
    if isinstance(value, dict):
        return {k: v if k in ("type", "questions") else
                rng.choice([12.5, 0.0, rng.random() * 100]) if k == "latency_ms" and isinstance(v, float) else
                rng.choice([0, 3, 250]) if k == "latency_ms" and isinstance(v, int) and not isinstance(v, bool) else
                _vary(rng, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_vary(rng, v) for v in value]
    if isinstance(value, bool):
        return rng.random() < 0.5
    if isinstance(value, float):
        r = rng.random()
        return rng.choice([float("nan"), float("inf"), 10 ** 20]) if r < 0.03 else rng.choice(
            [rng.random(), rng.choice(FLOATS)])
    if isinstance(value, int):
        return rng.choice([0, 1, 2, 7, -1, value])
    if isinstance(value, str):
        return rng.choice(STATES + ["refund", "cancel", "a", value, value])
    return value


def write_random(path: Path, n: int, seed: int) -> Path:
    """Rows of a few shapes (values varied) and some of any shape; repeats, comments and blank lines."""
    rng = random.Random(seed)
    shapes = [_row(rng, i) for i in range(6)]
    rows: List[dict] = []
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            if rng.random() < 0.02:
                handle.write(rng.choice(["", "# a comment", "   "]) + "\n")
            if rows and rng.random() < 0.05:
                row = rows[rng.randrange(len(rows))]                       # a repeated case
            elif rng.random() < 0.8:
                row = _vary(rng, rng.choice(shapes))
                if rng.random() < 0.3:
                    row["questions"] = dict(BODIES)
                if isinstance(row["state"], str):
                    row["state"] = rng.choice(STATES + ["m%d" % (i % 300)])
            else:
                row = _row(rng, i)
            rows.append(row)
            handle.write(_line(rng, row) + "\n")
    return path


@pytest.mark.parametrize("seed", [1, *(pytest.param(s, marks=pytest.mark.slow) for s in (2, 3))])
@pytest.mark.slow
def test_random_answers_store_the_same_cells(tmp_path, seed):
    path = write_random(tmp_path / "answers.jsonl", 1500, seed)
    fast = ingest_both(tmp_path, path)
    assert fast > 500, "the template path read only %d rows" % fast


@pytest.mark.slow   # ~30 s
def test_small_blocks_and_flushes_keep_rows_order_and_row_groups(tmp_path, monkeypatch):
    """Many blocks (templates reused, learned mid-file) and many flushes: the same cells and row groups."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 3000)
    monkeypatch.setattr(ingest_bulk, "FLUSH_EVERY", 97)
    monkeypatch.setattr(record, "FLUSH_EVERY", 97)
    path = write_random(tmp_path / "answers.jsonl", 400, 7)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"state": "last", "questions": BODIES, "expected": {"spam": True},
                                 "answers": {"spam": {"type": "noul", "noul": 0.9}}}, ensure_ascii=False))  # no newline
    assert ingest_both(tmp_path, path) > 150


def _mess_up(path: Path, keep) -> int:
    """Rewrite the lines whose 0-based number `keep` refuses as another writer would (keys in reverse
    order, no spaces); returns the number of lines left as json.dumps wrote them."""
    lines = path.read_text(encoding="utf-8").split("\n")
    canonical = 0
    for i, line in enumerate(lines):
        try:
            value = json.loads(line)
        except ValueError:                                     # comments, blank lines
            continue
        if keep(i) or not isinstance(value, dict):
            canonical += 1
            continue
        lines[i] = json.dumps(dict(reversed(list(value.items()))), ensure_ascii=False, separators=(",", ":"))
    path.write_text("\n".join(lines), encoding="utf-8")
    return canonical


def test_a_file_no_column_wise_reader_can_read_goes_row_by_row_from_its_first_line(tmp_path):
    """A first block that neither the templates nor the loose reader read (here every line repeats a key,
    which json.loads resolves by keeping the last value) sends the whole file to the per-row path: the
    same cells, no row read column-wise."""
    path = write_random(tmp_path / "answers.jsonl", 1300, 11)
    _mess_up(path, lambda i: False)
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join('{"state": 0, ' + line[1:] if line.startswith("{") else line for line in lines),
                    encoding="utf-8")
    assert ingest_both(tmp_path, path) == 0


def test_unreadable_blocks_mid_file_go_row_by_row_and_the_templates_come_back(tmp_path, monkeypatch):
    """Blocks of ~200 lines, samples of 32; lines 1000-1599 are not canonical: the first such block and
    the PROBE_EVERY - 1 after it go to the loose reader untried, the next probes the templates again.
    The same cells either way."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 150_000)
    monkeypatch.setattr(ingest_bulk, "SAMPLE", 32)
    path = write_random(tmp_path / "answers.jsonl", 3000, 12)
    _mess_up(path, lambda i: not 1000 <= i < 1600)
    blocks, block = [], ingest_bulk.BulkIngest._block

    def spy(self, lines, first, matched):
        found, split, loose = matched
        blocks.append((first, len(lines), sum(len(p) for _t, p, _c in found) + (split is not None and len(split.lines)),
                       0 if loose is None else len(loose.lines)))
        return block(self, lines, first, matched)

    monkeypatch.setattr(ingest_bulk.BulkIngest, "_block", spy)
    assert ingest_both(tmp_path, path) > 1500
    assert all(n >= 4 * 32 for _f, n, _r, _l in blocks[:-1])              # every block is sampled
    reads = [r for _f, _n, r, _l in blocks]
    messy = reads.index(0)                                              # the first block the templates skip
    assert 1000 <= blocks[messy][0] + blocks[messy][1] and blocks[messy][0] < 1600, blocks
    assert not any(reads[messy:messy + 8]) and reads[messy + 8] > 0, blocks
    assert all(b[3] for b in blocks[messy:messy + 8]), blocks           # ... and the loose reader reads


def test_canonical_lines_of_supported_shapes_are_all_read_through_templates(tmp_path):
    rng = random.Random(5)
    shapes = []
    while len(shapes) < 5:
        row = _row(rng, len(shapes))
        try:
            learn(json.dumps(row, ensure_ascii=False))
        except Unsupported:
            continue
        shapes.append(row)
    rows = [_vary(rng, rng.choice(shapes)) for _ in range(400)]
    rows = [r for r in rows if all(not isinstance(v, (int, float)) or isinstance(v, bool) or
                                   (math.isfinite(v) and abs(v) < 10 ** 15) for v in _leaves(r))]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert ingest_both(tmp_path, path) == len(rows)


def _leaves(value: Any):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


BAD = [
    {"type": "noul", "noul": "0.7"},                   # a string noul: the reference crashes
    {"type": "score", "score": "high"},                 # score float() fails (label numeric)
]


@pytest.mark.parametrize("messy", [False, True], ids=["canonical", "messy"])
@pytest.mark.parametrize("bad", ["noul", "score", "latency", "missing", "json", "tags", "utf8", "cr", "no-answers",
                                 "answers-list", "int64-min", "trailing-comma", "braced-json", "surrogate"])
def test_a_bad_line_after_good_ones_is_the_same_error(tmp_path, bad, messy):
    """The same one error from both paths; `messy`: every line spelled as another writer would, so the
    loose reader reads the good ones and leaves the bad one to the per-row path."""
    rng = random.Random(11)
    good = [json.dumps(_row(rng, i), ensure_ascii=False) for i in range(60)]
    good = [g for g in good if "NaN" not in g and "Infinity" not in g and '"noul": "' not in g]
    row = {"state": "s", "questions": BODIES, "expected": {"spam": True, "urgency": 1},
           "answers": {"spam": {"type": "noul", "noul": 0.2}, "urgency": {"type": "score", "score": 1}}}
    if bad == "noul":
        row["answers"]["spam"]["noul"] = "0.7"
    elif bad == "score":
        row["answers"]["urgency"]["score"] = "high"
    elif bad == "latency":
        row["latency_ms"] = -1
    elif bad == "missing":
        del row["answers"]["urgency"]
    elif bad == "tags":
        row["tags"] = "vip"
    elif bad == "no-answers":
        del row["answers"]
    elif bad == "answers-list":
        row["answers"] = [1]
    elif bad == "int64-min":                  # a template int leaf holding -2**63 (then a bad latency)
        row["expected"]["urgency"], row["latency_ms"] = -2 ** 63, -2
    line = json.dumps(row, ensure_ascii=False) if bad != "json" else '{"state": "s", "questions": '
    if messy:
        good, line = [messy_line(rng, g) for g in good], line if bad == "json" else messy_line(rng, line)
    if bad == "trailing-comma":                    # DuckDB reads it, json.loads does not
        line = line[:-1] + ",}"
    elif bad == "braced-json":                     # fails the loose reader's query: it reads the valid lines
        line = '{"state": "s", "questions": }'
    elif bad == "surrogate":                       # JSON, but no UTF-8 text holds it (DuckDB refuses it)
        line = line.replace('"s"', '"\\ud800"', 1)
    data = ("\n".join(good[:40] + [line] + good[40:]) + "\n").encode("utf-8")
    if bad == "utf8":
        data = data.replace(b'"s"', b'"\xff"', 1)
    if bad == "cr":
        data = data.replace(b"\n", b"\r\n", 3) + b'{"state": 1}\r\n'
    path = tmp_path / "answers.jsonl"
    path.write_bytes(data)
    messages = []
    for bulk in (True, False):
        wh = Warehouse(str(tmp_path / ("wh%d" % bulk)))
        with pytest.raises(UsageError) as err:
            ingest(wh, str(path), run_id="r", bulk=bulk)
        messages.append(str(err.value))
        assert not wh.has_run("r")
    assert messages[0] == messages[1]


# --- awkward values: NaN/Infinity tokens, any float, booleans, nested labels, unicode --------------
TRICKY_STRINGS = ["na\u00efve", "\u65e5\u672c\u8a9e", "\U0001F600 emoji", "e\u0301", "zero\u200bwidth", "\u202ertl",
                  "del\x7f", "line\u2028sep", 'quote "', "back\\slash", "/slash", "nul\x00", "", " ", "m"]


def _tricky_float(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.3:                                                    # any finite double, from its bits
        while True:
            value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if math.isfinite(value):
                return value
    if r < 0.4:
        return rng.choice([float("nan"), float("inf"), float("-inf")])
    if r < 0.5:
        return rng.choice([True, False, 0, 1, -0.0, 5e-324, 1.7976931348623157e308, 1e-07, 1e16, 2 ** 53 + 1])
    return rng.random() * 10 ** rng.randint(-6, 17)


def _tricky_label(rng: random.Random, qid: str) -> Any:
    if rng.random() < 0.25:
        return rng.choice([{"a": [1, {"b": None}]}, [["x"], "y"], True, False, 0, 1.5, float("nan"), "\u00e9",
                           {"\U0001F600": "k"}, []])
    return _label(rng, qid)


def _tricky_row(rng: random.Random, i: int, shape: dict) -> dict:
    row = json.loads(json.dumps(shape))                           # the shape's keys, in its order
    row["state"] = rng.choice(TRICKY_STRINGS + ["s%d" % (i % 40)])
    row["expected"] = {q: _tricky_label(rng, q) for q in row["expected"]}
    for qid, answer in row["answers"].items():
        for key in answer:
            if key in ("answer_confidence", "confidence", "noul", "score"):
                answer[key] = _tricky_float(rng)
            elif key == "choice":
                answer[key] = rng.choice(["refund", "cancel", "other", True, None] + TRICKY_STRINGS)
            elif key == "probabilities":
                answer[key] = {k: _tricky_float(rng) for k in answer[key]}
    if "language" in row:
        row["language"] = rng.choice(TRICKY_STRINGS + ["en", None, True])
    if "tags" in row:
        row["tags"] = rng.sample(TRICKY_STRINGS, rng.randint(0, 3))
    if "latency_ms" in row:
        value = _tricky_float(rng)
        row["latency_ms"] = (abs(value) if isinstance(value, float) and math.isfinite(value) else
                             rng.choice([12.5, 0, 3]))
    return row


def write_tricky(path: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    shapes = [{"state": "", "questions": BODIES, "expected": {"intent": "refund", "spam": True, "urgency": 1},
               "language": "en", "tags": [],
               "answers": {"intent": {"type": "choice", "choice": "refund", "probabilities": {"refund": 0.5,
                                                                                             "other": 0.5},
                                      "answer_confidence": 0.5},
                           "spam": {"type": "noul", "noul": 0.5, "confidence": 0.5},
                           "urgency": {"type": "score", "score": 1.5}},
               "latency_ms": 1.0},
              {"state": "", "questions": {"pick": BODIES["pick"]}, "expected": {"pick": "a"}, "tags": ["t"],
               "answers": {"pick": {"type": "choice", "choice": "a", "confidence": 0.5}}}]
    rows: List[dict] = []
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            row = rows[rng.randrange(len(rows))] if rows and rng.random() < 0.1 else _tricky_row(rng, i, rng.choice(shapes))
            rows.append(row)
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


@pytest.mark.parametrize("seed", [21, pytest.param(22, marks=pytest.mark.slow)])
@pytest.mark.slow
def test_awkward_values_store_the_same_cells(tmp_path, monkeypatch, seed):
    """NaN/Infinity tokens, doubles from random bits (their text comes from DuckDB, checked against the
    line), booleans where numbers go, nested labels, unicode and escapes; small blocks, so repeated
    cases are numbered across blocks."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 20000)
    path = write_tricky(tmp_path / "answers.jsonl", 900, seed)
    fast = ingest_both(tmp_path, path)
    assert fast > 150, "the template path read only %d rows" % fast


def test_case_numbers_count_like_the_per_row_buffer():
    """CaseNumbers (10-byte digests in sorted numpy runs) numbers repeats exactly as a dict does,
    across blocks, including digests that end in NUL bytes."""
    from laya_cases.record.ingest.ids import CaseNumbers, digests, from_hex, to_hex
    import hashlib
    rng = random.Random(4)
    for _trial in range(60):
        numbers, seen = CaseNumbers(), {}
        pool = [bytes(rng.randrange(256) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 25))]
        for _block in range(rng.randint(1, 9)):
            keys = [rng.choice(pool) for _ in range(rng.randint(0, 30))]
            column = to_hex(digests(keys))
            assert column.to_pylist() == [hashlib.blake2b(k, digest_size=10).hexdigest() for k in keys]
            assert to_hex(digests(keys, b"\0q\0")).to_pylist() == [
                hashlib.blake2b(k + b"\0q\0", digest_size=10).hexdigest() for k in keys]
            with_nulls = pa.array([None] + column.to_pylist() + [None], pa.string())
            found = numbers.number(from_hex(with_nulls))
            for pos, digest in enumerate(column.to_pylist()):
                seen[digest] = seen.get(digest, 0) + 1
                assert (found or {}).get(pos, 1) == seen[digest]
    import numpy as np
    numbers = CaseNumbers()
    ends_in_nul = np.array([b"ab" + b"\0" * 8, b"ab" + b"\0" * 7 + b"\1", b"ab"], dtype="S10")
    assert numbers.number(ends_in_nul) == {2: 2}
    assert numbers.number(ends_in_nul) == {0: 3, 1: 2, 2: 4}


def test_slice_sets_of_many_distinct_attributes_are_numbered_in_first_appearance(tmp_path):
    """More combinations than one int64 code can hold: the codes are renumbered on the way."""
    rng = random.Random(8)
    n = 12000
    cols = {name: [rng.choice([None, "v%d" % rng.randrange(10 ** 6)]) for _ in range(n)]
            for name in ("language_key", "model_key", "qid", "answer_type")}
    cols["tags"] = [rng.choice([[], [""], ["a,b"], ["a", "b"], ["t%d" % rng.randrange(10 ** 6)], None]) for _ in range(n)]
    cols["correct"] = [rng.choice([True, False, None]) for _ in range(n)]
    table = pa.table(cols)
    bulk = ingest_bulk.BulkIngest.__new__(ingest_bulk.BulkIngest)
    bulk.slice_sets = {"earlier": 0}
    got = bulk._slice_sets(table).to_pylist()
    assert math.prod(len(set(map(repr, v))) + 1 for v in cols.values()) >= 1 << 62     # the renumbering ran
    want, ids = [], {"earlier": 0}
    for i in range(n):
        combo = tuple((tuple(cols[k][i] or ()) if k == "tags" else cols[k][i])      # DecisionBuffer._append's
                      for k in ("language_key", "model_key", "qid", "tags", "answer_type", "correct"))
        want.append(ids.setdefault(combo, len(ids)))
    assert got == want


@pytest.mark.parametrize("bad_first", [True, False])
def test_a_late_carriage_return_reads_row_by_row_from_the_start(tmp_path, monkeypatch, bad_first):
    """Block i+1 is read while block i is being stored: a carriage return found ahead still sends the
    whole file to the per-row path, and a bad line before it is still the one error."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 4000)
    rng = random.Random(12)
    rows = [json.dumps(_vary(rng, {"state": "s", "questions": BODIES, "expected": {"spam": True},
                                   "answers": {"spam": {"type": "noul", "noul": 0.25}}}), ensure_ascii=False)
            for _ in range(120)]
    if bad_first:
        rows[3] = rows[3].replace('"noul": ', '"noul": "', 1).replace("}}", '"}}', 1)    # a string noul
    data = "\n".join(rows).encode("utf-8") + b"\r\n" + rows[0].encode("utf-8") + b"\n"
    path = tmp_path / "answers.jsonl"
    path.write_bytes(data)
    if not bad_first:
        ingest_both(tmp_path, path)
        return
    messages = []
    for bulk in (True, False):
        with pytest.raises(UsageError) as err:
            ingest(Warehouse(str(tmp_path / ("wh%d" % bulk))), str(path), run_id="r", bulk=bulk)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and ":4 " in messages[0]


@pytest.mark.slow
def test_float_text_from_arrow_when_duckdb_does_not_write_repr(tmp_path, monkeypatch):
    """A DuckDB whose double -> VARCHAR is not Python's repr() is not trusted: Arrow writes the float
    text, and the cells are the same."""
    from laya_cases.record.ingest.template import writes_repr
    assert writes_repr(__import__("duckdb").connect())         # the DuckDB this suite runs with does
    monkeypatch.setattr(ingest_bulk, "writes_repr", lambda con: False)
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 20000)
    path = write_tricky(tmp_path / "answers.jsonl", 500, 23)
    assert ingest_both(tmp_path, path) > 80


# --- rows that each ask their own questions (record/ingest/cases.py) --------------------------------
def _tidy(rng: random.Random, qid: str) -> dict:
    """An answer of one fixed shape per question, with values every case template reads."""
    r = rng.random
    return {"intent": lambda: {"type": "choice", "choice": rng.choice(["refund", "cancel", "caf\u00e9"]),
                               "probabilities": {"refund": r(), "other": r()}, "answer_confidence": r()},
            "spam": lambda: {"type": "noul", "noul": r(), "confidence": rng.choice([r(), 0.5, 1e-05])},
            "urgency": lambda: {"type": "score", "score": 2 * r()},
            "pick": lambda: {"type": "choice", "choice": rng.choice(["a", "b"])}}[qid]()


def write_varied(path: Path, n: int, seed: int, clean: bool) -> Path:
    """Every row asks its own subset of BODIES in its own order (the same in its three maps); `clean`:
    canonical lines of values the case templates read, else awkward labels, answers and lines mixed in."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            qids = rng.sample(sorted(BODIES), rng.randint(1, 4))
            labels = {q: {"intent": rng.choice(["cancel", "other"]), "spam": rng.random() < 0.3,
                          "urgency": rng.choice([0, 2]), "pick": "b"}[q] if clean else _label(rng, q) for q in qids}
            row = {"state": rng.choice(STATES + ["v%d" % (i % 40)]), "questions": {q: BODIES[q] for q in qids},
                   "expected": labels, "language": rng.choice(["en", "fr", "\u00e9s"]),
                   "tags": rng.choice([[], ["vip"], ["a,b", "c|d"]]),
                   "answers": {q: _tidy(rng, q) if clean or rng.random() < 0.8 else _answer(rng, q) for q in qids},
                   "latency_ms": rng.choice([12.5, 0.0, rng.random() * 100])}
            if rng.random() < 0.2:                 # another key order: other case templates
                row = dict(reversed(list(row.items())))
            handle.write((json.dumps(row, ensure_ascii=False) if clean or rng.random() < 0.9 else
                          _line(rng, row)) + "\n")
    return path


def test_varied_question_subsets_and_orders_are_read_case_by_case(tmp_path):
    path = write_varied(tmp_path / "answers.jsonl", 600, 31, clean=True)
    assert ingest_both(tmp_path, path) == 600


@pytest.mark.parametrize("seed", [32, pytest.param(33, marks=pytest.mark.slow)])
def test_varied_awkward_rows_store_the_same_cells(tmp_path, monkeypatch, seed):
    """Case templates over many blocks (repeated cases numbered across them), mixed with per-row lines."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 200000)
    path = write_varied(tmp_path / "answers.jsonl", 900, seed, clean=False)
    fast = ingest_both(tmp_path, path)
    assert fast > 150, "the column-wise path read only %d rows" % fast


# --- any spelling: the loose reader (record/ingest/loose.py, sql/ingest/answers_loose.sql) --------------
_NUMBER = re.compile(r"(?<=[\[:,\s])(-?\d+\.\d+(?:e[-+]?\d+)?)")
_SPACINGS = [(", ", ": "), (",", ":"), (" ,  ", " :\t"), (",\n", ":")[:1] + (": ",)]


def _shuffled(rng: random.Random, value: Any) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(rng, v) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(rng, v) for v in value]
    return value


def messy_line(rng: random.Random, line: str) -> str:
    """The line's row as another writer would put it: every object's keys in a random order, other
    separators, ASCII escapes on some lines, floats in exponent form ('%.16e') on others."""
    spacing = rng.choice(_SPACINGS)
    text = json.dumps(_shuffled(rng, json.loads(line)), ensure_ascii=rng.random() < 0.3,
                      separators=(spacing[0].replace("\n", " "), spacing[1]))
    return _NUMBER.sub(lambda m: "%.16e" % float(m.group(1)), text) if rng.random() < 0.5 else text


def mess(path: Path, seed: int) -> int:
    """Rewrite every JSON line of the file with messy_line; returns how many there are."""
    rng, n = random.Random(seed), 0
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        try:
            json.loads(line)
        except ValueError:                                     # comments, blank lines
            continue
        lines[i], n = messy_line(rng, line), n + 1
    path.write_text("\n".join(lines), encoding="utf-8")
    return n


def test_a_file_of_another_writer_is_read_column_wise_line_for_line(tmp_path, monkeypatch):
    """Keys in random orders at every depth, other spacing, escapes and exponent floats: no template
    reads a line, the loose reader reads every one, over several blocks; the same cells."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 60000)
    path = write_varied(tmp_path / "answers.jsonl", 600, 34, clean=True)
    n = mess(path, 34)
    assert ingest_both(tmp_path, path) == n == 600


@pytest.mark.parametrize("write", ["random", "tricky", "varied"])
def test_any_spelling_of_awkward_rows_stores_the_same_cells(tmp_path, monkeypatch, write):
    """The awkward generators' rows (NaN and Infinity tokens, doubles from random bits, huge ints, booleans
    where numbers go, nested labels, object states, escapes, odd types), spelled messily: the loose reader
    reads most lines, the per-row path the rest, and every stored cell is the per-row path's."""
    monkeypatch.setattr(ingest_bulk, "BLOCK_BYTES", 40000)
    path = tmp_path / "answers.jsonl"
    {"random": lambda: write_random(path, 900, 41), "tricky": lambda: write_tricky(path, 600, 42),
     "varied": lambda: write_varied(path, 600, 43, clean=False)}[write]()
    n = mess(path, 44)
    fast = ingest_both(tmp_path, path)
    assert fast > n // 3, "the loose reader read only %d of %d rows" % (fast, n)


def test_duckdb_writes_json_texts_as_python_where_the_reader_trusts_them():
    """The loose reader's premise, on 20,000 doubles of every magnitude (and from random bits): where
    lc_json_plain holds, DuckDB's minified text is json.dumps's compact text, and lc_json_token and
    lc_json_str are json.dumps and str() of the value."""
    import duckdb

    from laya_cases.record.ingest.loose import LooseReader, writes_python_text

    con = duckdb.connect()
    reader = LooseReader(con)
    assert reader.usable and writes_python_text(con)
    rng = random.Random(3)
    values = [rng.random() * 10 ** rng.uniform(-9, 22) * rng.choice([1, -1]) for _ in range(10000)]
    values += [v for v in (struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(10000))
               if math.isfinite(v)]
    values += [0, -7, 10 ** 14, 2 ** 63, -2 ** 63 - 1, 10 ** 30, "é\u2603", "a,b:c", "q\"", "\x7f", True, None]
    texts = [json.dumps([v]) if rng.random() < 0.5 else "[%s]" % ("%.16e" % v if isinstance(v, float) else json.dumps(v))
             for v in values]
    rows = con.execute("SELECT CAST(json(t) AS VARCHAR), lc_json_plain(json(t)), lc_json_token(json(t) -> '$[0]'), "
                       "lc_json_str(json(t) -> '$[0]') FROM (SELECT unnest(?) AS t)", [texts]).fetchall()
    plain = 0
    for (text, is_plain, token, as_str), t in zip(rows, texts):
        value = json.loads(t)
        if is_plain:
            plain += 1
            assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False), t
        if token is not None:
            assert token == json.dumps(value[0], ensure_ascii=False), t
        if as_str is not None:
            assert as_str == str(value[0]) and not isinstance(value[0], bool), t
    assert plain > 5000


def test_a_line_duckdb_cannot_parse_leaves_the_rest_of_its_block_to_the_loose_reader(tmp_path):
    """A lone surrogate escape in a key nothing stores: json.loads reads the line, DuckDB refuses it, so
    the block's query fails; the reader runs it again over the lines DuckDB parses, and only that line
    goes row by row."""
    path = write_varied(tmp_path / "answers.jsonl", 300, 35, clean=True)
    n = mess(path, 35)
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[150] = '{"note": "\\ud800", ' + lines[150][1:]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert ingest_both(tmp_path, path) == n - 1 == 299


# object states, as written by hand: the loose reader keeps DuckDB's text of a flat one (lc_json_flat) and
# asks Python for any other; a key repeated at the top or below, a separator or brace in a string, an escape
STATE_TEXTS = ['{"k": 1, "k": 2}', '{"k": 1, "j": "x", "k": [3]}', '{"a": {"b": 1, "b": 2}}', '[{"x": 1, "x": 2}]',
               '{"t": "a, b: c", "o": ["x,y", "z:"]}', '{"t":"a,b" , "u" :"c:d"}', '{"q": "say \\"hi\\", go"}',
               '{"n": "line\\nbreak", "b": "back\\\\slash"}', '{"c": "\\u001b esc"}', '{"e": "\\u00e9t\\u00e9"}',
               '{"t": "{brace}"}', '{"f": 1e-07, "g": 1E22, "h": 2.50}', '[1, "a,b", [2.5, null]]', '{}', '[]',
               '{"big": 123456789012345678901, "neg": -0.0}', '{"nested": {"deeper": {"x": "y, z"}}}']


# answers, as written by hand: DuckDB's text of one is kept where no object in it but its own and its
# probabilities (both checked) can repeat a key
ANSWER_TEXTS = ['{"type": "choice", "choice": "refund", "meta": {"k": 1, "k": 2}}',
                '{"type": "choice", "choice": "refund", "meta": [{"k": 1, "k": [2]}]}',
                '{"type": "choice", "choice": "refund", "probabilities": {"refund": 0.6, "other": 0.4}, "m": {"z": 1, "z": 2}}',
                '{"type": "choice", "choice": "refund", "probabilities": {"refund": 0.6, "other": 0.4}, "m": {"k": "{"}}',
                '{"type": "choice", "choice": "refund", "probabilities": [0.5], "note": "a, b: {c}"}',
                '{"type": "choice", "choice": "other", "probabilities": {}, "meta": [1, [2, "x,y"]]}']


def test_object_states_and_answers_in_any_spelling_store_the_per_row_cells(tmp_path):
    """Each state and answer text above, in lines otherwise as json.dumps writes them or messy: read
    column-wise, every stored cell (the case ids too) the per-row path's."""
    rng = random.Random(71)
    lines = []
    for i in range(240):
        row = {"state": "S", "questions": {"intent": BODIES["intent"]}, "expected": {"intent": "refund"},
               "answers": {"intent": "A"}}
        text = json.dumps(row, ensure_ascii=False) if i % 2 else messy_line(rng, json.dumps(row, ensure_ascii=False))
        answer = json.dumps(_tidy(rng, "intent")) if i % 3 else ANSWER_TEXTS[i % len(ANSWER_TEXTS)]
        lines.append(text.replace('"S"', STATE_TEXTS[i % len(STATE_TEXTS)], 1).replace('"A"', answer, 1))
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert ingest_both(tmp_path, path) == 240


# --- hostile values in every field the loose reader reads -----------------------------------------
HOSTILE = {
    "type": ["choice", "noul", "score", "text", 5, None, True],
    "choice": ["refund", "x\ny", 'q"', "a,b:c", 3, 2.5, True, None, {"a": 1}, ["a"]],
    "noul": [0.3, True, False, 1, None, "0.7", float("inf"), float("nan"), 0.5],
    "score": [1, 2.5, "2", None, True, 10 ** 20, -0.0, 1e-07],
    "answer_confidence": [0.5, 1, True, "0.9", None, float("nan"), 10 ** 16, 2 ** 70, 1e-07, 1e16],
    "confidence": [0.5, 0, False, None, [0.5], 1e-05],
    "probabilities": [{"refund": 0.2, "cancel": 0.8}, {}, {"refund": "0.5"}, {"refund": True}, [0.5], None,
                      {"refund": 1e-05, "other": 1e17}, {"cancel": 0.0, "other": -0.0}, {"x": 10 ** 15}],
    "abstention": ["low", 1, None],
    "meta": [{"k": [1, {"z": None}]}, "m", 7],
}
ROW_HOSTILE = {
    "label": ["refund", True, 1, 2.5, None, {"a": 1}, [1], "\u00e9", 10 ** 20, "r\u00e9f\"und"],
    "language": ["en", None, 1, 1.5, True, "", {"x": 1}, "a\\b", 10 ** 20],
    "model": ["m", "", 0, 0.0, False, None, 3, 'a"b', -0.0],
    "tags": [[], ["a"], None, "vip", [1, "a"], [None], ["a\tb"], ["a", "a"]],
    "item_id": ["x", 5, 5.5, True, None, 10 ** 20, "x\\y"],
    "latency_ms": [1, 0, -1, 1.5, True, None, 10 ** 20, "5", 1e-07],
    "state": ["s", "", {"b": 1, "a": [1, 2]}, 5, None, "line\nbreak", "\u2603 \\ \"",
              # object states DuckDB's text serves (lc_json_flat) or Python's: separators and braces in strings,
              # escapes, a control character DuckDB escapes in upper case, nesting, a key repeated (below)
              {"t": "a, b: c", "o": ["x,y", "z:"], "n": 2.5}, {"t": "line\nbreak\ttab", "p": "back\\slash"},
              {"q": 'say "hi", then: go'}, {"c": "esc\x1b"}, {"n": {"a": 1}, "m": [{"b": [2]}]}, {"t": "{brace}"},
              [1, "a,b", [2.5, None]], {"f": 1e-07, "g": 1e22}, {"dupkey": 1, "z": "a:b"}, {}, []],
}


def _hostile_row(rng: random.Random, i: int) -> dict:
    qids = rng.sample(sorted(BODIES), rng.randint(1, 3))
    row: dict = {"state": "s%d" % (i % 7), "questions": {q: BODIES[q] for q in qids},
                 "expected": {q: _label(rng, q) for q in qids}, "answers": {q: _tidy(rng, q) for q in qids}}
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(sorted(ROW_HOSTILE))
        value = rng.choice(ROW_HOSTILE[key])
        if key == "label":
            row["expected"][rng.choice(qids)] = value
        else:
            row[key] = value
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(sorted(HOSTILE))
        row["answers"][rng.choice(qids)][key] = rng.choice(HOSTILE[key])
    return row


def _duplicate_a_key(rng: random.Random, text: str) -> str:
    """Repeat a key in the line's text (json.loads keeps the last value, at the first one's place)."""
    where = rng.choice(['{"state"', '"type"', '"expected"', '"refund"', '"dupkey"'])
    at = text.find(where.lstrip("{"))
    if at < 0:
        return text
    return text[:at] + where.lstrip("{") + ': "dup", ' + text[at:]


def _per_row_accepts(recorder, line: str) -> bool:
    """Whether the per-row path reads the line without an error (check_row, then its decisions)."""
    from laya_cases.core.dataset import Row, check_row
    from laya_cases.record.ingest.answers import record_answers_row

    try:
        value = json.loads(line)
        record_answers_row(recorder, Row(index=0, line_no=1, raw=value, tags=check_row(value, "x")))
    except (UsageError, ValueError):
        return False
    return True


@pytest.mark.parametrize("spelling", ["messy", "canonical"])
@pytest.mark.parametrize("seed", [51, 103, 121, 128])   # 103, 121, 128: a null state in a case template
def test_hostile_values_in_any_spelling_store_the_per_row_cells(tmp_path, seed, spelling):
    """Every field the column-wise readers read, given values of every JSON type (big ints, NaN,
    containers, escapes, falsy models, repeated keys), in rows the per-row path accepts, spelled messily
    (the loose reader) or as json.dumps writes them (the templates): the same stored cells, whichever
    path reads each line."""
    rng = random.Random(seed)
    recorder = record.RunRecorder(Warehouse(str(tmp_path / "scratch")), "scratch", "scratch")
    lines: List[str] = []
    while len(lines) < 400:
        text = json.dumps(_hostile_row(rng, len(lines)), ensure_ascii=False)
        text = messy_line(rng, text) if spelling == "messy" else text
        text = _duplicate_a_key(rng, text) if rng.random() < 0.1 else text
        if _per_row_accepts(recorder, text):
            lines.append(text)
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert ingest_both(tmp_path, path) > 100


@pytest.mark.parametrize("seed", range(61, 63))
def test_hostile_values_in_any_spelling_give_the_per_row_error(tmp_path, seed):
    """Rows the per-row path may refuse among them: the same one error (or none) either way."""
    rng = random.Random(seed)
    for attempt in range(8):
        path = tmp_path / ("answers%d.jsonl" % attempt)
        lines = []
        for i in range(30):
            text = messy_line(rng, json.dumps(_hostile_row(rng, i), ensure_ascii=False))
            lines.append(_duplicate_a_key(rng, text) if rng.random() < 0.1 else text)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        errors = []
        for bulk in (True, False):
            try:
                ingest(Warehouse(str(tmp_path / ("probe%d%d" % (attempt, bulk)))), str(path), run_id="r", bulk=bulk)
                errors.append(None)
            except UsageError as exc:
                errors.append(str(exc))
        assert errors[0] == errors[1]
