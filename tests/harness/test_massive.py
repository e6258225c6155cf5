"""The per-language MASSIVE harness (spec S7.1-S7.7, T7.1, T7.2; issue 9 items 1, 2, 5).

Data comes through Hugging Face `datasets` (a local folder here, never the Hub); every language's
decisions are rows of one run; the per-language block is sql/massive/ over that run; the harness
document exports and imports losslessly. A scripted runner keeps these tests fast; the real models
are in test_massive_models.py.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from typing import Any, Dict, List

import duckdb
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from doubles import choice_answer
from helpers import needs_shared_data, require_shared_data, shared_data
from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.massive import sampler
from laya_cases.harness.massive import data, document, metrics
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

MASSIVE = shared_data("massive", "test")
needs_massive = needs_shared_data("massive", "test", "en-US.jsonl")
T7_1_DIGEST = "2bc2d3f1be78c0e8f32d44f51af916279ab69ee469da395da358ba6108d2c9df"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


class ScriptedRunner(Runner):
    """Answers from the utterance alone: option (length mod k) at one of five confidences (ties)."""

    name = "massive-scripted"
    capabilities = Capabilities()

    def __init__(self, model: Any = None, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="scripted", revision=None,
                               settings={"decision_rule": "length mod k", "temperature": None})

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        labels = list(questions["intent"]["criteria"])
        out = []
        for state in states:
            text = state["utterance"]
            gold_like = [l for l in labels if l.split("_")[0] in text]      # right now and then
            label = gold_like[0] if gold_like else labels[len(text) % len(labels)]
            out.append({"answers": {"intent": choice_answer(label, 0.3 + 0.1 * (len(text) % 5), labels)}})
        return out


@pytest.fixture(autouse=True)
def scripted():
    registry.register(ScriptedRunner.name, ScriptedRunner)
    yield
    registry.unregister(ScriptedRunner.name)


# ---------------------------------------------------------------------------- data and sampler (S7.1-S7.3)
@needs_massive
def test_t7_1_sampler_through_hf_datasets():
    """T7.1 on rows read by the `datasets` json builder: 4-option keys, gold indices, the digest."""
    records = data.load("en", MASSIVE).records
    assert len(records) == 2974 and records[0] == {"id": "0", "text": "wake me up at five am this week",
                                                   "label": "alarm_set"}
    rows4 = sampler.sample_rows(records, "en", 3, n_opts=4)
    assert [list(r["questions"]["intent"]["criteria"]) for r in rows4] == [
        ["qa_factoid", "alarm_set", "general_quirky", "general_greet"],
        ["transport_ticket", "audio_volume_mute", "cooking_recipe", "qa_definition"],
        ["iot_hue_lightchange", "music_settings", "audio_volume_mute", "calendar_remove"]]
    rows = sampler.sample_rows(records, "en")
    keys = [list(r["questions"]["intent"]["criteria"]) for r in rows]
    golds = [k.index(r["expected"]["intent"]) for k, r in zip(keys, rows)]
    assert golds[:20] == [17, 1, 4, 17, 7, 11, 7, 9, 9, 9, 7, 12, 15, 7, 19, 13, 3, 7, 11, 4]
    digest = hashlib.sha256(json.dumps(keys, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    assert digest == T7_1_DIGEST
    assert rows[0]["language"] == "en" and rows[0]["item_id"] == "0"
    assert rows[0]["questions"]["intent"]["criteria"]["alarm_set"] == "alarm set"
    assert sampler.option_text("wire.transfer_failed") == "wire: transfer failed"


def test_skip_keeps_the_sampling_stream():
    """--skip N: rows N+1.. with the options a longer dataset gives them (the rng still draws for the
    rows left out), so rows 1-5 and 6-10 are the two halves of rows 1-10."""
    records = [{"id": str(i), "text": "text %d" % i, "label": "l%d" % (i % 7)} for i in range(12)]
    whole = sampler.sample_rows(records, "en", 10, n_opts=4)
    assert sampler.sample_rows(records, "en", 5, n_opts=4) + sampler.sample_rows(records, "en", 5, n_opts=4,
                                                                                   skip=5) == whole
    assert sampler.sample_rows(records, "en", None, n_opts=4, skip=10) == sampler.sample_rows(records, "en", None,
                                                                                              n_opts=4)[10:]


def test_options_zero_offers_every_label_sorted_on_every_row():
    """n_opts = 0: no draw, every row asks the one question (all labels in sorted order), so rows batch."""
    records = [{"id": str(i), "text": "text %d" % i, "label": "l%d" % ((i * 5) % 7)} for i in range(12)]
    rows = sampler.sample_rows(records, "en", None, n_opts=0)
    assert {json.dumps(r["questions"], sort_keys=True) for r in rows} == {json.dumps(rows[0]["questions"],
                                                                                     sort_keys=True)}
    assert list(rows[0]["questions"]["intent"]["criteria"]) == ["l%d" % i for i in range(7)]
    assert [r["expected"]["intent"] for r in rows] == [r["label"] for r in records]
    assert sampler.sample_rows(records, "en", 5, n_opts=0, skip=5) == rows[5:10]


def test_language_codes_are_the_references_short_codes():
    assert data.code_of("en-US") == data.code_of("EN") == "en"
    assert data.code_of("zh-cn") == "zh-CN" and data.code_of("zh-TW") == "zh-TW"
    assert data.parse_langs("de, en-US,zh-CN") == ["de", "en", "zh-CN"]
    every = data.parse_langs("all")
    assert len(every) == 51 and "ca" not in every and every[0] == "af"
    assert data.code_of("ca-ES") == "ca"                       # MASSIVE 1.1, local folders only
    for bad in ("xx", "en,en-US", ""):
        with pytest.raises(UsageError):
            data.parse_langs(bad)


def test_without_data_or_network_one_line_exit_2(tmp_path, monkeypatch):
    """No --data and no Hub: one line naming --data, exit 2, nothing written (no checkout path is tried)."""
    monkeypatch.setattr(data.hub, "reachable", lambda: False)
    wh = tmp_path / "wh"
    res = _invoke("massive", "run", "--model", ScriptedRunner.name, "--langs", "en", "-w", str(wh))
    assert res.exit_code == 2 and not wh.exists()
    assert res.stderr.count("\n") == 1 and "--data DIR" in res.stderr and "mteb/amazon_massive_intent" in res.stderr
    res = _invoke("massive", "dataset", "en-US", "--out", str(tmp_path / "x.jsonl"))
    assert res.exit_code == 2 and "--data DIR" in res.stderr and not (tmp_path / "x.jsonl").exists()


@needs_massive
def test_bad_data_folder_names_the_file(tmp_path):
    (tmp_path / "en-US.jsonl").write_text('{"id": "1", "text": "hi"}\n')
    res = _invoke("massive", "run", "--model", ScriptedRunner.name, "--langs", "en", "--data", str(tmp_path),
                  "-w", str(tmp_path / "wh"))
    assert res.exit_code == 2 and "en-US.jsonl has no field 'label'" in res.stderr
    res = _invoke("massive", "run", "--model", ScriptedRunner.name, "--langs", "de", "--data", str(tmp_path),
                  "-w", str(tmp_path / "wh"))
    assert res.exit_code == 2 and "has no de-DE.jsonl" in res.stderr and not (tmp_path / "wh").exists()


# ---------------------------------------------------------------------------- the metric block (S7.5, T7.2)
def _block(rows: List[tuple]) -> Dict[str, Dict[str, Any]]:
    """languages.sql over hand-made massive_cases rows (lang, pos, conf, correct, gold, pred)."""
    con = duckdb.connect()
    sqlfiles.prepare_connection(con)
    con.execute("CREATE TABLE massive_cases (lang VARCHAR, pos BIGINT, row_index BIGINT, item_id VARCHAR, "
                "conf DOUBLE, correct INTEGER, gold_index BIGINT, pred_index BIGINT, temperature DOUBLE, "
                "cost_ms DOUBLE)")
    con.executemany("INSERT INTO massive_cases VALUES (?, ?, ?, NULL, ?, ?, ?, ?, 1.0, 2.0)",
                    [(lang, pos, pos, conf, correct, gold, pred) for lang, pos, conf, correct, gold, pred in rows])
    return metrics.raw_languages(con)


def test_t7_2_metric_block():
    conf, correct, gold, pred = [0.9, 0.8, 0.8, 0.6, 0.3], [1, 0, 1, 1, 0], [0, 1, 2, 0, 1], [0, 2, 2, 0, 0]
    raw = _block([("xx", i, conf[i], correct[i], gold[i], pred[i]) for i in range(5)])["xx"]
    block = metrics.block(raw)
    assert block["n"] == 5 and block["accuracy"] == 0.6 and block["macro_f1"] == 0.4889
    assert block["ece"] == 0.28 and block["mean_confidence"] == 0.68
    assert block["acc_at_50_coverage"] == 0.5 and block["acc_at_50_tie_straddle"] is True
    assert raw["selective_accuracy_50"] == pytest.approx(2 / 3, abs=1e-15) and raw["selective_accepted"] == 3
    assert block["selective_accuracy@50"] == 0.6667 and block["temperature"] == 1.0
    # the reverse order inside the 0.8 level gives the other published value (why the flag exists)
    order = [0, 2, 1, 3, 4]
    swapped = _block([("xx", p, conf[i], correct[i], gold[i], pred[i]) for p, i in enumerate(order)])["xx"]
    assert swapped["acc_at_50_coverage"] == 1.0 and swapped["macro_f1"] == raw["macro_f1"]


def _reference(conf: List[float], correct: List[int], gold: List[int], pred: List[int]) -> Dict[str, Any]:
    """S7.5 in plain Python (the reference's definitions; sklearn for macro-F1)."""
    from sklearn.metrics import f1_score

    n = len(conf)
    order = sorted(range(n), key=lambda i: -conf[i])            # stable: ties in case order
    h = max(1, n // 2)
    cut = conf[order[h - 1]]
    k = max(1, math.ceil(0.5 * n))
    level = conf[order[k - 1]]
    accepted = [i for i in range(n) if conf[i] >= level]
    edges = [i / 15 for i in range(16)]
    ece = 0.0
    for b in range(15):
        members = [i for i in range(n) if sum(conf[i] > e for e in edges[1:15]) == b and 0 <= conf[i] <= 1]
        if members:
            ece += len(members) / n * abs(math.fsum(conf[i] for i in members) / len(members)
                                          - sum(correct[i] for i in members) / len(members))
    labels = sorted(set(gold) | set(pred))
    return {"accuracy": sum(correct) / n, "macro_f1": f1_score(gold, pred, labels=labels, average="macro"),
            "ece": ece, "mean_confidence": math.fsum(conf) / n,
            "acc_at_50_coverage": sum(correct[i] for i in order[:h]) / h,
            "acc_at_50_tie_straddle": sum(c > cut for c in conf) < h < sum(c >= cut for c in conf),
            "selective_accuracy_50": sum(correct[i] for i in accepted) / len(accepted)}


@pytest.mark.slow   # 60 trials
def test_metric_block_equals_plain_python_on_random_inputs_with_ties():
    rng = random.Random(7)
    for trial in range(60):
        n = rng.randint(1, 40)
        levels = [rng.choice([0.0, 1 / 15, 0.2, 0.5, 0.8, 1.0]) if rng.random() < 0.5 else rng.random()
                  for _ in range(rng.randint(1, 6))]
        k = rng.randint(2, 6)
        conf = [rng.choice(levels) for _ in range(n)]
        gold = [rng.randrange(k) for _ in range(n)]
        pred = [g if rng.random() < 0.5 else rng.randrange(k) for g in gold]
        correct = [int(g == p) for g, p in zip(gold, pred)]
        got = _block([("l%d" % trial, i, conf[i], correct[i], gold[i], pred[i]) for i in range(n)])["l%d" % trial]
        want = _reference(conf, correct, gold, pred)
        for key, value in want.items():
            if isinstance(value, bool):
                assert got[key] is value, (trial, key)
            else:
                assert got[key] == pytest.approx(value, abs=1e-12), (trial, key, got[key], value)


def test_summary_is_the_mean_of_rounded_values_s7_6():
    blocks = {"a": {"n": 3, "accuracy": 0.33335, "ece": 0.1, "macro_f1": 0.2},
              "b": {"n": 3, "accuracy": 0.1, "ece": 0.2, "macro_f1": 0.3},
              "c": {"n": 0}, "d": {"error": "RuntimeError: x"}}
    s = metrics.summary(blocks, seconds=1.5)
    assert s == {"languages": 2, "macro_accuracy": round((0.33335 + 0.1) / 2, 4), "macro_ece": 0.15,
                 "macro_f1": 0.25, "seconds": 1.5}


# ---------------------------------------------------------------------------- the run (S7.1-S7.6)
@pytest.fixture(scope="module")
def harness_store(tmp_path_factory):
    """`massive run` of the scripted runner over en, de, fr (12 rows each, 20 options): one run."""
    require_shared_data("massive", "test", "en-US.jsonl")
    registry.register(ScriptedRunner.name, ScriptedRunner)
    root = tmp_path_factory.mktemp("massive") / "wh"
    out = root.parent / "doc.json"
    res = _invoke("massive", "run", "--model", ScriptedRunner.name, "--langs", "en,de,fr", "--per-lang", "12",
                  "--data", str(MASSIVE), "-w", str(root), "--run-id", "h", "--out", str(out))   # the harness's flag
    assert res.exit_code == 0, (res.stderr, res.exception)
    return Warehouse(root), res.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_run_prints_a_line_per_language_and_the_macro_line(harness_store):
    _wh, stdout, doc = harness_store
    lines = stdout.splitlines()
    assert [l.split()[0] for l in lines] == ["en", "de", "fr", "macro"]
    for line, lang in zip(lines, ("en", "de", "fr")):
        b = doc["report"][lang]
        assert line.startswith("%-6s n=12 acc=%.4f macro_f1=%.4f ece=%.4f conf=%.4f" % (
            lang, b["accuracy"], b["macro_f1"], b["ece"], b["mean_confidence"]))
    s = doc["summary"]          # the research harness's macro line, character for character (its print format)
    assert lines[3] == "macro over %d languages: acc=%.4f  ece=%.4f  f1=%.4f" % (
        s["languages"], s["macro_accuracy"], s["macro_ece"], s["macro_f1"])
    assert doc["config"]["per_lang"] == 12 and doc["config"]["n_opts"] == 20 and doc["config"]["seed"] == 13
    assert doc["config"]["langs"] == ["en", "de", "fr"]


@pytest.mark.slow
def test_report_writes_the_harness_document_with_out_and_no_cases(harness_store, tmp_path):
    """`massive report --out F --no-cases`: the research harness's flags; the report and summary unchanged."""
    wh, stdout, doc = harness_store
    res = _invoke("massive", "report", "h", "-w", str(wh.root), "--out", str(tmp_path / "r.json"), "--no-cases")
    assert res.exit_code == 0, res.stderr
    again = json.loads((tmp_path / "r.json").read_text())
    assert again["cases"] == [] and len(doc["cases"]) == 36
    assert again["report"] == doc["report"] and res.stdout.splitlines()[3] == stdout.splitlines()[3]


@pytest.mark.slow
def test_one_run_whose_language_slice_gives_the_same_accuracy(harness_store):
    """Harness accuracy = `report --slice language` choice_accuracy of the same run."""
    wh, _stdout, doc = harness_store
    rep = R.build(connect(wh, ["h"]), "h", R.Options(include_cases=False))
    sliced = rep["slices"]["language"]
    assert {k: round(v["choice_accuracy"], 4) for k, v in sliced.items()} == \
        {k: v["accuracy"] for k, v in doc["report"].items()}
    con = connect(wh, ["h"])
    metrics.prepare(con, "h")
    raw = metrics.raw_languages(con)
    for lang in ("en", "de", "fr"):                      # unrounded: the same numbers, not merely close
        assert raw[lang]["accuracy"] == sliced[lang]["choice_accuracy"]
        assert raw[lang]["selective_accuracy_50"] == sliced[lang]["selective_accuracy@50"]
        assert raw[lang]["mean_confidence"] == sliced[lang]["mean_confidence"]
        assert raw[lang]["ece"] == pytest.approx(sliced[lang]["ece"], abs=1e-15)
    printed = _invoke("report", "h", "--slice", "language", "-w", str(wh.root)).stdout
    for lang, block in doc["report"].items():
        assert "language=%s " % lang in printed and "choice_accuracy=%.4f" % block["accuracy"] in printed
    assert wh.run_ids() == ["h"]


@pytest.mark.slow
def test_rows_carry_item_id_and_state_and_the_sampled_options(harness_store):
    wh, _stdout, doc = harness_store
    con = connect(wh, ["h"])
    ids = con.execute("SELECT language_key, list(item_id ORDER BY row_index) FROM cases GROUP BY 1 ORDER BY 1") \
        .fetchall()
    assert [i for _, i in ids] == [[r["id"] for r in data.load("en", MASSIVE).records[:12]]] * 3   # parallel ids
    records = data.load("de", MASSIVE).records
    want = sampler.sample_rows(records, "de", 12)
    got = [c for c in doc["cases"] if c["lang"] == "de"]
    assert [c["state"] for c in got] == [r["state"] for r in want]
    assert [c["options"] for c in got] == [list(r["questions"]["intent"]["criteria"]) for r in want]
    assert [c["option_texts"] for c in got] == [list(r["questions"]["intent"]["criteria"].values()) for r in want]
    assert all(c["options"][c["gold_index"]] == c["gold_label"] for c in got)


def test_input_sha256_is_the_compact_json_of_the_case_fields(harness_store):
    _wh, _stdout, doc = harness_store
    fields = ("lang", "index", "state", "instructions", "options", "option_texts", "gold_index")
    for lang in ("en", "fr"):
        cases = [{k: c[k] for k in fields} for c in doc["cases"] if c["lang"] == lang]
        text = json.dumps(cases, ensure_ascii=False, separators=(",", ":"))
        assert doc["report"][lang]["input_sha256"] == hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------- export and import (S7.7)
@pytest.mark.slow
def test_export_passes_the_recheck_and_import_gives_the_same_report(harness_store, tmp_path):
    wh, _stdout, doc = harness_store
    out = tmp_path / "h.json"
    res = _invoke("export", "h", "--format", "harness", "--out", str(out), "-w", str(wh.root))
    assert res.exit_code == 0, res.stderr
    exported = json.loads(out.read_text())
    for lang, block in exported["report"].items():
        mine = [c["correct"] for c in exported["cases"] if c["lang"] == lang]
        assert abs(sum(mine) / len(mine) - block["accuracy"]) < 5e-5
    assert exported["report"] == doc["report"] and exported["cases"] == doc["cases"]
    res = _invoke("import", str(out), "--run-id", "back", "-w", str(wh.root))
    assert res.exit_code == 0 and res.stdout.strip() == "back", res.stderr
    again = document.build(wh, "back")
    assert again["report"] == exported["report"] and again["summary"] == exported["summary"]
    assert again["cases"] == exported["cases"]
    opts = R.Options(include_cases=False)
    a, b = (R.build(connect(wh, [rid]), rid, opts) for rid in ("h", "back"))
    for key in ("overall", "slices"):
        assert a[key] == b[key]


def test_recheck_refuses_a_report_its_cases_do_not_give():
    cases = [{"lang": "en", "correct": 1}, {"lang": "en", "correct": 0}, {"lang": "en", "correct": 0}]
    document.recheck({"en": {"accuracy": 0.3333}}, cases)
    with pytest.raises(UsageError, match="re-derivation check failed for en"):
        document.recheck({"en": {"accuracy": 0.3334}}, cases)


def _reference_document() -> Dict[str, Any]:
    """A laya-evals harness report: S7.7 cases only (no probabilities, logits, item ids or latencies)."""
    cases = []
    for i, (lang, conf, gold, pred) in enumerate([("en", 0.9, 0, 0), ("en", 0.8, 1, 2), ("en", 0.8, 2, 2),
                                                  ("en", 0.6, 0, 0), ("en", 0.3, 1, 0), ("de", 0.7, 1, 1)]):
        options = ["alarm_set", "play_music", "iot_hue_lightchange"]
        cases.append({"lang": lang, "index": i, "state": {"utterance": "u%d" % i},
                      "instructions": sampler.INSTRUCTIONS, "options": options,
                      "option_texts": [sampler.option_text(o) for o in options], "gold_index": gold,
                      "gold_label": options[gold], "pred_index": pred, "pred_label": options[pred],
                      "probability": conf, "p_gold": conf if gold == pred else 0.05, "confidence": conf,
                      "correct": int(gold == pred), "temperature": 0.5})
    return {"config": {"checkpoint": "convaiinnovations/laya", "per_lang": 5, "n_opts": 3, "seed": 13},
            "report": {"en": {"n": 5, "accuracy": 0.6}, "de": {"n": 1, "accuracy": 1.0}},
            "summary": {"languages": 2}, "cases": cases}


def test_import_of_a_reference_document_is_queryable(tmp_path):
    """T7.2's cases as a published laya-evals report: imported, the SQL gives T7.2's block."""
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(_reference_document()))
    wh = tmp_path / "wh"
    res = _invoke("import", str(path), "--run-id", "ref", "-w", str(wh))
    assert res.exit_code == 0, res.stderr
    doc = document.build(Warehouse(wh), "ref")
    en = doc["report"]["en"]
    assert (en["accuracy"], en["macro_f1"], en["ece"], en["mean_confidence"], en["acc_at_50_coverage"],
            en["acc_at_50_tie_straddle"]) == (0.6, 0.4889, 0.28, 0.68, 0.5, True)
    assert doc["report"]["de"]["accuracy"] == 1.0 and doc["summary"]["languages"] == 2
    res = _invoke("massive", "report", "ref", "-w", str(wh))
    assert res.exit_code == 0 and res.stdout.splitlines()[0].startswith("en     n=5 acc=0.6000 macro_f1=0.4889")


@pytest.mark.parametrize("change, message", [
    (lambda d: d["cases"][1].update(lang=5), "cases[1] field 'lang' must be a str"),
    (lambda d: d["cases"][2].update(gold_index=7), "cases[2] field 'gold_index' is outside the 3 options"),
    (lambda d: d["cases"][0].update(confidence="high", probability=None), "cases[0] field 'confidence'"),
    (lambda d: d.update(cases=[]), "is not a harness document"),
])
def test_a_bad_document_is_one_line_and_commits_nothing(tmp_path, change, message):
    doc = _reference_document()
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    wh = tmp_path / "wh"
    res = _invoke("import", str(path), "-w", str(wh))
    assert res.exit_code == 2 and message in res.stderr and res.stderr.count("\n") == 1
    assert Warehouse(wh).run_ids() == []


def test_the_docs_plain_duckdb_block_gives_the_harness_numbers(harness_store):
    """docs/massive.md's ```sql block, run as written (plain duckdb, no laya-cases code) on run `h`."""
    import re

    from helpers import ROOT

    wh, _stdout, doc = harness_store
    text = (ROOT / "docs" / "massive.md").read_text(encoding="utf-8")
    [block] = re.findall(r"^```sql\n(.*?)^```", text, re.M | re.S)
    sql = block.replace("'RUN'", "'h'").replace("'warehouse/", "'%s/" % wh.root)
    got = {r[0]: r[1:] for r in duckdb.connect().execute(sql).fetchall()}
    assert set(got) == {"en", "de", "fr"}
    for lang, (n, accuracy, mean_confidence, acc50) in got.items():
        block = doc["report"][lang]
        assert (n, round(accuracy, 4), round(mean_confidence, 4), round(acc50, 4)) == \
            (block["n"], block["accuracy"], block["mean_confidence"], block["acc_at_50_coverage"])


class GermanFails(ScriptedRunner):
    name = "massive-german-fails"

    def predict_batch(self, states, questions, **kwargs):
        if any(s["utterance"] == "leise" for s in states):
            raise RuntimeError("runner exploded on %r" % states[0]["utterance"])
        return super().predict_batch(states, questions, **kwargs)


@needs_massive
@pytest.mark.slow
def test_a_language_with_failed_rows_reports_its_error_and_the_macro_leaves_it_out(tmp_path):
    """--on-error skip: de's second row fails; de is {"error": ...}, en is scored, the macro is en's."""
    registry.register(GermanFails.name, GermanFails)
    try:
        res = _invoke("massive", "run", "--model", GermanFails.name, "--langs", "en,de", "--per-lang", "5",
                      "--data", str(MASSIVE), "-w", str(tmp_path / "wh"), "--run-id", "e", "--on-error", "skip",
                      "--json", str(tmp_path / "e.json"))
        fail = _invoke("massive", "run", "--model", GermanFails.name, "--langs", "de", "--per-lang", "5",
                       "--data", str(MASSIVE), "-w", str(tmp_path / "wh"), "--run-id", "f")
    finally:
        registry.unregister(GermanFails.name)
    assert res.exit_code == 0, res.stderr
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["report"]["de"] == {"error": "RuntimeError: runner exploded on 'leise'"}
    assert doc["report"]["en"]["n"] == 5 and doc["summary"]["languages"] == 1
    assert doc["summary"]["macro_accuracy"] == doc["report"]["en"]["accuracy"]
    assert res.stdout.splitlines()[1] == "de     error: RuntimeError: runner exploded on 'leise'"
    assert fail.exit_code == 1 and Warehouse(tmp_path / "wh").run_ids() == ["e"]     # --on-error fail: nothing


@pytest.mark.slow
def test_the_run_keeps_each_rows_input_once(harness_store):
    """store/inputs.py: the massive run's dataset rows, the utterance as the state, one file for the run."""
    wh, _stdout, _doc = harness_store
    con = connect(wh, ["h"])
    rows = con.execute("SELECT i.row_index, json_extract_string(i.row_json, '$.state.utterance') FROM inputs i "
                       "ORDER BY 1").fetchall()
    digest = wh.run_row("h")["labelled_rows_sha256"]
    assert len(rows) == 36 and wh.inputs_file(digest).is_file()       # other tests here add other runs
    texts = [r["text"] for code in ("en", "de", "fr") for r in data.load(code, MASSIVE).records[:12]]
    assert [t for _, t in rows] == texts
