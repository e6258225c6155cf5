"""Every harness document is the same bytes under any DuckDB thread count (spec S9.8, issue 27 item 9).

Each store is built once, cheaply (ingested recorded answers, an imported harness document, runner
doubles); then each harness's published document is produced with DuckDB threads = 1, then with 8
(three times) and 16, and must be identical bytes. The thread count is forced by patching
laya_cases.query.sql.memory_settings, whose settings every warehouse connection applies (a check below
makes sure the patch reaches the connection, so the test cannot pass by running single-threaded).
The inputs make float order matter: hundreds of items asked in 3 to 11 languages (shares k/7, k/9,
k/11 ...), full-precision confidences and probabilities. Where a store can be written in two row
orders with the same multiset of cases (the cross-lingual grid, the report), both must agree too.
A plain avg() of doubles (the old sql/crosslingual/summary.sql) fails here within a few repeats.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import write_jsonl
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.presentation import harness as presentation
from laya_cases.harness.relevance import board
from laya_cases.harness.relevance.bench import BenchOptions, run_benchmark
from laya_cases.harness.relevance import metrics as relevance
from laya_cases.runners import registry
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from test_presentation import RandomLogitRunnerDouble
from test_relevance import ScriptedScorer, write_language
from test_robustness import ContentRunnerDouble
from laya_cases.query.sql import connect

THREADS = (1, 8, 8, 8, 16)
LANGS = ["l%02d" % i for i in range(11)]
OPTIONS = ["x", "y", "z", "w"]
_MEMORY = sqlfiles.memory_settings


def _invoke(*args: Any) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (args, result.stderr, result.exception)


def _threads(monkeypatch, n: int) -> None:
    monkeypatch.setattr(sqlfiles, "memory_settings", lambda: dict(_MEMORY(), threads=str(n)))


# ---------------------------------------------------------------------------- stores
def _grid_rows(seed: int) -> List[Dict[str, Any]]:
    """300 parallel items, each asked in 3..11 languages, right about 40% of the time, with random
    full-precision probabilities (their maximum is the answer's confidence)."""
    rng, rows = random.Random(seed), []
    for item in range(300):
        gold = OPTIONS[item % 4]
        for lang in rng.sample(LANGS, rng.choice([3, 6, 7, 9, 11])):
            pred = gold if rng.random() < 0.4 else rng.choice(OPTIONS)
            weights = sorted((rng.random() for _ in OPTIONS), reverse=True)       # the prediction's is the largest
            keys = [pred] + [k for k in OPTIONS if k != pred]
            probs = {k: w / sum(weights) for k, w in zip(keys, weights)}
            rows.append({"state": "item %d in %s" % (item, lang), "language": lang, "item_id": "i%03d" % item,
                         "questions": {"intent": {"type": "choice", "instructions": "intent?", "criteria": OPTIONS}},
                         "expected": {"intent": gold},
                         "answers": {"intent": {"type": "choice", "choice": pred, "probabilities": probs,
                                                "answer_confidence": probs[pred]}}})
    return rows


def _massive_document(seed: int) -> Dict[str, Any]:
    """A harness document of 9 languages x 60 cases with distinct full-precision confidences."""
    rng, cases = random.Random(seed), []
    for lang in LANGS[:9]:
        for i in range(60):
            gold, pred, conf = rng.randrange(5), rng.randrange(5), 0.2 + 0.8 * rng.random()
            pred = gold if rng.random() < 0.5 else pred
            cases.append({"lang": lang, "index": i, "state": {"utterance": "u%d" % i}, "instructions": "intent?",
                          "options": ["a", "b", "c", "d", "e"], "gold_index": gold, "pred_index": pred,
                          "confidence": conf, "correct": int(gold == pred), "latency_ms": 1000 * rng.random()})
    return {"config": {"checkpoint": "c"}, "cases": cases}


class _Content(ContentRunnerDouble):
    name = "thread-content-double"


class _Scorer(ScriptedScorer):
    name = "thread-scripted-scorer"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> Dict[str, Any]:
    tmp = tmp_path_factory.mktemp("threads")
    wh, shuffled = tmp / "wh", tmp / "shuffled"
    rows = _grid_rows(1)
    _invoke("ingest", write_jsonl(tmp / "grid.jsonl", rows), "-w", wh, "--run-id", "grid")
    _invoke("ingest", write_jsonl(tmp / "other.jsonl", _grid_rows(2)), "-w", wh, "--run-id", "other")
    random.Random(3).shuffle(rows)
    _invoke("ingest", write_jsonl(tmp / "grid_shuffled.jsonl", rows), "-w", shuffled, "--run-id", "grid")
    (tmp / "massive.json").write_text(json.dumps(_massive_document(4)))
    _invoke("import", tmp / "massive.json", "-w", wh, "--run-id", "massive")
    for name, runner in ((_Content.name, _Content), (_Scorer.name, _Scorer)):
        registry.register(name, runner)
    try:
        robustness_rows = [{"state": {"utterance": "utterance %d" % i}, "language": LANGS[i % 5],
                            "questions": {"intent": {"type": "choice", "instructions": "Which one?",
                                                     "criteria": {"opt_%d" % j: "text %d" % j for j in range(5)}}},
                            "expected": {"intent": "opt_%d" % (i % 5)}} for i in range(300)]
        _invoke("robustness", write_jsonl(tmp / "rob.jsonl", robustness_rows), "--model", _Content.name,
                "--run-id", "rob", "-w", wh)
        rng = random.Random(5)
        for lang in LANGS[:7]:
            write_language(tmp / "rel", lang, [("yes" if rng.random() < 0.4 else "no", repr(rng.random()))
                                               for _ in range(120)])
        for model in ("m1", "m2"):
            run_benchmark(Warehouse(tmp / "rel_wh"), BenchOptions(data=str(tmp / "rel"), model="m",
                                                                  runner=_Scorer.name, name=model))
    finally:
        registry.unregister(_Content.name)
        registry.unregister(_Scorer.name)
    presentation.execute(Warehouse(wh), run_id="pres", runner=RandomLogitRunnerDouble(seed=6))
    return {"tmp": tmp, "wh": wh, "shuffled": shuffled, "rel": tmp / "rel_wh"}


# ---------------------------------------------------------------------------- the documents
def _file(path: Path) -> bytes:
    data = path.read_bytes()
    path.unlink()
    return data


def _cli_json(*args: Any) -> Callable[[Dict[str, Any], Path], bytes]:
    """A harness command that writes its document to --json FILE (`{wh}` is the warehouse)."""
    def produce(s: Dict[str, Any], root: Path) -> bytes:
        out = s["tmp"] / "out.json"
        _invoke(*[root if a == "{wh}" else a for a in args], "--json", out)
        return _file(out)
    return produce


def _relevance(s: Dict[str, Any], _root: Path) -> bytes:
    out = s["tmp"] / "csv"
    paths = relevance.export(Warehouse(s["rel"]), [], str(out))
    data = b"".join(_file(Path(p)) for p in sorted(paths))
    rows = board.leaderboard(Warehouse(s["rel"]))
    return data + json.dumps(rows, sort_keys=True, allow_nan=False).encode()


HARNESSES: Dict[str, Callable[[Dict[str, Any], Path], bytes]] = {
    "crosslingual": _cli_json("crosslingual", "grid", "--pivot", "l00", "-w", "{wh}"),
    "report": _cli_json("report", "grid", "--slice", "language", "-w", "{wh}"),
    "diff": _cli_json("diff", "grid", "other", "-w", "{wh}"),
    "massive": _cli_json("massive", "report", "massive", "-w", "{wh}"),
    "robustness": _cli_json("robustness", "--run", "rob", "-w", "{wh}"),
    "presentation": _cli_json("presentation", "--run", "pres", "-w", "{wh}"),
    "relevance": _relevance,
}

def _metrics(doc: bytes) -> Dict[str, Any]:
    """What a report publishes about the multiset of cases (its cases list and run facts follow the rows)."""
    parsed = json.loads(doc)
    return {"overall": parsed["overall"], "slices": parsed["slices"],
            "extensions": {k: v for k, v in parsed["extensions"].items() if k != "run"}}


#: the stores that hold the same multiset of cases in a second row order: what must agree
SHUFFLED: Dict[str, Callable[[bytes], Any]] = {"crosslingual": lambda doc: doc, "report": _metrics}


@pytest.mark.slow
def test_the_thread_count_reaches_the_connection(stores, monkeypatch):
    for n in (1, 8):
        _threads(monkeypatch, n)
        assert connect(Warehouse(stores["wh"]), ["grid"]).execute("SELECT current_setting('threads')").fetchone() \
            == (n,)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n not in ("report", "crosslingual") else n
                                  for n in sorted(HARNESSES)])   # slow: the benchmarks' documents
@pytest.mark.slow
def test_a_harness_document_is_the_same_bytes_under_any_thread_count(stores, monkeypatch, name):
    produce, seen = HARNESSES[name], []
    for n in THREADS:
        _threads(monkeypatch, n)
        seen.append(produce(stores, stores["wh"]))
    assert len(seen[0]) > 200
    assert all(doc == seen[0] for doc in seen), "%s: %d different documents over threads %s" % (
        name, len(set(seen)), THREADS)
    if name in SHUFFLED:
        same = SHUFFLED[name]
        assert same(produce(stores, stores["shuffled"])) == same(seen[0]), "%s depends on the row order" % name
