"""report --json streams its cases (laya_cases/report/stream.py) and must write exactly the bytes of
report.dumps(doc) of the fully built document: edge floats, NaN/Infinity, nested answers, unicode,
control characters, repeated tolerances; plus --no-cases and `--json -`."""
from __future__ import annotations

import io
import json
import math
import random
import struct

import pytest

from helpers import write_jsonl
from laya_cases.report import build as R
from laya_cases.report import stream as RJ
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

EDGE_FLOATS = [0.0, -0.0, 1e-7, 1e16, 1e15, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3,
               123456789.0, 1e22, 1e-5, 0.0001, 9007199254740993.0, math.nan, math.inf, -math.inf]


def _random_doubles(rng: random.Random, n: int):
    out = []
    for _ in range(n):
        bits = rng.getrandbits(64)
        out.append(struct.unpack("<d", struct.pack("<Q", bits))[0])
    return out


def test_encode_equals_json_dumps_on_random_and_edge_values():
    rng = random.Random(8)
    values = EDGE_FLOATS + _random_doubles(rng, 3000) + [rng.uniform(0, 1) for _ in range(500)]
    for v in values:
        assert RJ.encode(v, "    ") == json.dumps(v)
    nested = [{"b": [1, 2.5, {"z": None, "a": True}], "a": "x\u2028\x7f\x00\"\\\n\t\u00e9", "c": {}, "d": []},
              [], {}, "plain", 10 ** 30, -7, [[[]]], {"k": [{"k": [1e-7]}]}, False]
    for value in nested:
        for pad in ("", "      "):
            assert RJ.encode(value, pad) == json.dumps(value, indent=2, sort_keys=True,
                                                       ensure_ascii=False).replace("\n", "\n" + pad)


def _tricky_value(rng: random.Random, depth: int):
    """A random JSON value whose strings are made of the characters the encoder's text is cut and
    matched on: brackets, quotes, commas, colons, newlines, digits, backslashes."""
    pick = rng.random()
    text = lambda: "".join(rng.choice('{}[]",: \n1a\\') for _ in range(rng.randint(0, 6)))  # noqa: E731
    if depth == 0 or pick < 0.45:
        return rng.choice([text, lambda: rng.choice(EDGE_FLOATS), lambda: rng.randint(-3, 3), lambda: None,
                           lambda: rng.random() < 0.5])()
    if pick < 0.75:
        return [_tricky_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {text() if rng.random() < 0.5 else rng.choice(["a", "b", "[1]", '"}']):
            _tricky_value(rng, depth - 1) for _ in range(rng.randint(0, 3))}


@pytest.mark.slow
def test_encode_equals_json_dumps_on_random_nested_values():
    """The two-level path (laya_cases/report/stream.py _two_levels) replaces a nested container's text
    inside the whole answer's: strings that look like that text must stay as they are."""
    rng = random.Random(11)
    for _ in range(20000):
        value = _tricky_value(rng, 3)
        if isinstance(value, dict) and rng.random() < 0.5:      # the shapes the fast path takes: one level deep
            value = {k: (v if not isinstance(v, (dict, list)) else
                         [x for x in (v.values() if isinstance(v, dict) else v) if not isinstance(x, (dict, list))])
                     for k, v in value.items()}
        for pad in ("", "      "):
            assert RJ.encode(value, pad) == json.dumps(value, indent=2, sort_keys=True,
                                                       ensure_ascii=False).replace("\n", "\n" + pad), value
    same = {"p": [1, 2], "q": [1, 2], "r": "[1,\n        2]", "s": {"[1]": "[1]"}, "t": ["[1]"], "u": [0.5],
            "v": "x[0.5]"}
    assert RJ.encode(same, "      ") == json.dumps(same, indent=2, sort_keys=True).replace("\n", "\n      ")


def _rows(rng: random.Random, n: int):
    rows = []
    for i in range(n):
        kind = rng.choice(["choice", "noul", "score", "choice"])
        conf = rng.choice(EDGE_FLOATS[:14] + [rng.random(), rng.random()])
        if kind == "choice":
            answer = {"type": "choice", "choice": rng.choice(["a", "b", "é\"q"]), "confidence": conf,
                      "probabilities": {"a": rng.random(), "b": 1e-7, "é\"q": 0.0}}
            body, label = {"type": "choice", "instructions": "q", "criteria": ["a", "b", "é\"q"]}, rng.choice(["a", "b"])
        elif kind == "noul":
            answer = {"noul": rng.random(), "type": "noul", "extra": [1, {"y": -0.0, "x": None}]}
            body, label = {"type": "noul", "instructions": "q"}, rng.random() < 0.5
        else:
            answer = {"type": "score", "score": rng.choice([1, 2.5, 1e16]), "answer_confidence": conf}
            body, label = {"type": "score", "instructions": "q", "criteria": ["l", "m", "h"]}, rng.choice([0, 1.5, 2])
        row = {"state": "s%d\u2028\x01" % i, "questions": {"q%d" % (i % 3): body}, "expected": {"q%d" % (i % 3): label},
               "answers": {"q%d" % (i % 3): answer}, "tags": rng.choice([[], ["vip"], ["a\tb", 3]])}
        if i % 4:
            row["language"] = rng.choice(["en", "de", {"code": "fr", "n": 2}, ["x"], 7])
        if i % 5:
            row["model"] = rng.choice(["m1", "m\"2"])
        rows.append(row)
    rows.append({"state": "nan conf", "questions": {"q0": {"type": "choice", "instructions": "q", "criteria": ["a"]}},
                 "expected": {"q0": "a"}, "answers": {"q0": {"type": "choice", "choice": "a", "confidence": math.nan}}})
    rows.append({"state": "empty", "questions": {}, "expected": {}, "answers": {}})
    rows.append({"state": 'NaN, -Infinity and \\"Infinity\\"', "questions": {"q1": {"type": "choice", "instructions": "NaN?",
                 "criteria": ["NaN", "Infinity"]}}, "expected": {"q1": "NaN"}, "tags": ["-Infinity"],
                 "answers": {"q1": {"type": "choice", "choice": "Infinity", "confidence": math.inf,
                                    "note": "NaN", "probabilities": {"NaN": -math.inf, "Infinity": math.nan}}}})
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("rj")
    path = write_jsonl(root / "a.answers.jsonl", _rows(random.Random(3), 300))
    wh = Warehouse(root / "wh")
    ingest(wh, str(path), run_id="edge")
    empty = write_jsonl(root / "e.answers.jsonl", [{"state": "e", "questions": {}, "expected": {}, "answers": {}}])
    ingest(wh, str(empty), run_id="nocases")
    return wh


@pytest.mark.parametrize("run_id", ["edge", "nocases"])
@pytest.mark.parametrize("score_within", [(), pytest.param((0.5,), marks=pytest.mark.slow), (1.0, 0.25, 1.0)])
@pytest.mark.slow
def test_streamed_json_is_byte_identical(store, run_id, score_within, monkeypatch):
    options = R.Options(score_within=list(score_within))
    full = R.dumps(R.build(connect(store, [run_id]), run_id, options))
    monkeypatch.setattr(RJ, "BATCH", 7)                     # many batches, a short last one
    doc = R.build(connect(store, [run_id]), run_id, R.Options(score_within=list(score_within), include_cases=False))
    out = io.StringIO()
    RJ.write(out, doc, connect(store, [run_id]), run_id, score_within)
    assert out.getvalue() == full
    plain = io.StringIO()
    RJ.write(plain, dict(doc, cases=[]))
    assert plain.getvalue() == R.dumps(dict(doc, cases=[]))
    assert json.loads(out.getvalue().replace("NaN", "null"))["cases"] or run_id == "nocases"


@pytest.mark.parametrize("helper", ["works", *(pytest.param(h, marks=pytest.mark.slow)   # helper processes that crash
                                     for h in ("dies at once", "dies after one batch"))])
@pytest.mark.slow
def test_a_helper_process_renders_every_other_batch_to_the_same_bytes(store, tmp_path, monkeypatch, helper):
    """laya_cases/report/answer_helper.py: the same bytes whether the helper renders, fails at start (every batch
    is then rendered here) or dies mid-run; to a text stream and to a file (where it writes bytes)."""
    from laya_cases.report import answer_helper

    full = R.dumps(R.build(connect(store, ["edge"]), "edge", R.Options()))
    monkeypatch.setattr(RJ, "BATCH", 7)
    monkeypatch.setattr(RJ, "HELPER_FROM", 0)
    started = []
    real_init = answer_helper.Helper.__init__

    def init(self):
        real_init(self)
        started.append(self)
        if helper == "dies at once":
            self.process.kill()
            self.process.wait()

    monkeypatch.setattr(answer_helper.Helper, "__init__", init)
    if helper == "dies after one batch":
        real_result = answer_helper.Helper.result

        def result(self):
            got = real_result(self)
            self.process.kill()
            self.process.wait()
            return got
        monkeypatch.setattr(answer_helper.Helper, "result", result)
    doc = R.build(connect(store, ["edge"]), "edge", R.Options(include_cases=False))
    out = io.StringIO()
    RJ.write(out, doc, connect(store, ["edge"]), "edge")
    assert out.getvalue() == full
    target = tmp_path / "r.json"
    RJ.save(str(target), doc, store, "edge", ())
    assert target.read_text(encoding="utf-8") == full
    assert len(started) == 2 and all(h.process.poll() is not None for h in started)   # and each is gone after


# ---------------------------------------------------------------------------- the CLI: --json FILE|-, --no-cases
def _invoke(*args):
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app
    return CliRunner().invoke(app, list(args))


@pytest.mark.slow
def test_cli_json_to_stdout_and_no_cases(store, tmp_path):
    root = str(store.root)
    to_file = _invoke("report", "edge", "-w", root, "--json", str(tmp_path / "r.json"), "--score-within", "0.5")
    assert to_file.exit_code == 0, to_file.stderr
    written = (tmp_path / "r.json").read_text(encoding="utf-8")
    want = R.dumps(R.build(connect(store, ["edge"]), "edge", R.Options(score_within=[0.5])))
    assert written == want and to_file.stdout.startswith("aurc")          # the text report beside the file
    to_stdout = _invoke("report", "edge", "-w", root, "--json", "-", "--score-within", "0.5")
    assert to_stdout.exit_code == 0 and to_stdout.stdout == written + "\n"   # JSON only, the text report off
    bare = _invoke("report", "edge", "-w", root, "--json", "-", "--no-cases", "--score-within", "0.5")
    doc, full = json.loads(bare.stdout), json.loads(written)
    assert doc["cases"] == [] and len(full["cases"]) == 302
    assert bare.stdout == R.dumps(dict(json.loads(written), cases=[])) + "\n"


def test_cli_json_unwritable_is_one_line(store, tmp_path):
    result = _invoke("report", "edge", "-w", str(store.root), "--json", str(tmp_path / "no" / "such" / "r.json"))
    assert result.exit_code == 2 and result.stderr.startswith("laya-cases: --json ")
    assert "r.json: cannot write there" in result.stderr
    assert len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------- what DuckDB writes (issue 8)
def test_duckdb_writes_a_double_as_repr_does():
    """report/case_texts.sql has DuckDB write every number of a case: CAST(DOUBLE AS VARCHAR) must be
    Python's repr (the shortest round-trip text, same exponent form) on edge and random doubles."""
    import duckdb

    rng = random.Random(11)
    values = [v for v in EDGE_FLOATS + _random_doubles(rng, 20000) + [rng.random() for _ in range(2000)]
              + [round(rng.random(), 4) for _ in range(2000)] + [rng.uniform(-1e9, 1e9) for _ in range(2000)]
              if math.isfinite(v)]
    con = duckdb.connect()
    texts = con.execute("SELECT [CAST(x AS VARCHAR) FOR x IN $v]", {"v": values}).fetchone()[0]
    wrong = [(v, t) for v, t in zip(values, texts) if t != repr(v)]
    assert not wrong, wrong[:5]


def test_streaming_caps_duckdb_memory_unless_the_user_set_it(store, tmp_path, monkeypatch):
    """The cases are sorted into case order by DuckDB: its memory for that is STREAM_MEMORY (the sort
    spills), or what $LAYA_CASES_MEMORY_LIMIT says."""
    seen = []
    original = Warehouse.connect

    def spy(self, *args, **kwargs):
        con = original(self, *args, **kwargs)
        seen.append(con)
        return con

    monkeypatch.setattr(Warehouse, "connect", spy)
    doc = R.build(connect(store, ["edge"]), "edge", R.Options(include_cases=False))
    monkeypatch.delenv("LAYA_CASES_MEMORY_LIMIT", raising=False)
    RJ.save(str(tmp_path / "a.json"), doc, store, "edge", ())
    limit = seen[-1].execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert limit == "488.2 MiB" and RJ.STREAM_MEMORY == "512MB"
    monkeypatch.setenv("LAYA_CASES_MEMORY_LIMIT", "300MiB")
    RJ.save(str(tmp_path / "b.json"), doc, store, "edge", ())
    assert seen[-1].execute("SELECT current_setting('memory_limit')").fetchone()[0] == "300.0 MiB"
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def _reject(token):
    raise ValueError("strict JSON has no %s" % token)


@pytest.mark.parametrize("run_id", ["edge", "nocases"])
def test_strict_json_writes_null_for_every_non_finite_number_and_leaves_strings(store, run_id, monkeypatch):
    """--json-strict: parses under a parser that refuses NaN/Infinity; equal to the default document
    read with each non-finite number as null; strings that spell NaN or Infinity are untouched."""
    monkeypatch.setattr(RJ, "BATCH", 7)
    doc = R.build(connect(store, [run_id]), run_id, R.Options(include_cases=False))
    default, strict = io.StringIO(), io.StringIO()
    RJ.write(default, doc, connect(store, [run_id]), run_id, ())
    RJ.write(strict, doc, connect(store, [run_id]), run_id, (), strict_json=True)
    got = json.loads(strict.getvalue(), parse_constant=_reject)
    assert got == json.loads(default.getvalue(), parse_constant=lambda token: None)
    if run_id == "edge":
        assert "NaN" in default.getvalue() and "Infinity" in default.getvalue()
        (case,) = [c for c in got["cases"] if c["qid"] == "q1" and c["expected"] == "NaN"]
        assert case["answer"]["note"] == "NaN" and case["answer"]["probabilities"] == {"NaN": None, "Infinity": None}
        assert case["answer"]["confidence"] is None and case["tags"] == ["-Infinity"]
    with pytest.raises(ValueError, match="strict JSON has no NaN"):
        json.loads(default.getvalue().replace('"cases": [', '"x": NaN, "cases": ['), parse_constant=_reject)


@pytest.mark.slow
def test_the_json_strict_flag_writes_what_a_strict_parser_reads(store, tmp_path):
    """`report RUN --json F --json-strict` (and `-`): the strict document; without the flag, the reference's bytes."""
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    plain, strict = tmp_path / "plain.json", tmp_path / "strict.json"
    for target, extra in ((plain, []), (strict, ["--json-strict"])):
        result = CliRunner().invoke(app, ["report", "edge", "-w", str(store.root), "--json", str(target), *extra])
        assert result.exit_code == 0, result.output
    assert "NaN" in plain.read_text() and "Infinity" in plain.read_text()
    got = json.loads(strict.read_text(), parse_constant=_reject)
    assert got == json.loads(plain.read_text(), parse_constant=lambda token: None)
    piped = CliRunner().invoke(app, ["report", "edge", "-w", str(store.root), "--json", "-", "--json-strict"])
    assert json.loads(piped.stdout, parse_constant=_reject) == got
