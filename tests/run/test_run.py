"""`laya-cases run`: chunking and the timing block (S6.12), errors (S6.10), the gate (S6.11), crash exit
codes (S6.7, S9.7), timing metrics (S3.15), the MASSIVE sampler (S7.2, T7.1) and the real embedders."""
from __future__ import annotations

import hashlib
import json
import math

import pytest
from typer.testing import CliRunner

from helpers import ROOT, SPEC_FIXTURES, cli, needs_shared_data, shared_data, write_jsonl
from doubles import ExplodingRunnerDouble, FakeClock, SingleModelDouble, TimedRunnerDouble

from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.harness.massive import sampler as massive
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.runners import registry
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

DS_BATCH = str(SPEC_FIXTURES / "ds_batch.jsonl")
MASSIVE = shared_data("massive", "test")
needs_massive = needs_shared_data("massive", "test")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def _report(wh: Warehouse, rid: str) -> dict:
    return R.build(connect(wh, [rid]), rid, R.Options())


def _invoke(*args: str):
    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    return CliRunner().invoke(app, list(args))


@pytest.fixture
def doubles_registered():
    for cls in (ExplodingRunnerDouble, TimedRunnerDouble, SingleModelDouble):
        registry.register(cls.name, cls)
    yield
    for cls in (ExplodingRunnerDouble, TimedRunnerDouble, SingleModelDouble):
        registry.unregister(cls.name)


# ---------------------------------------------------------------------------- T6.3
def _t63(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    clock = FakeClock()
    runner = ExplodingRunnerDouble(clock=clock)
    rid = execute(wh, RunOptions(DS_BATCH, batch_size=2, on_error="skip", sort_by_length=True,
                                 min_confidence=0.7, run_id="t63"), runner=runner, clock=clock).run_id
    return wh, rid, runner


def test_t6_3_timing_block_errors_and_metrics(tmp_path):
    """T6.3: N=2, skip, --sort-by-length, --min-confidence 0.7 on ds_batch.jsonl."""
    wh, rid, runner = _t63(tmp_path)
    doc = _report(wh, rid)
    timing = doc["config"]["timing"]
    assert {k: timing[k] for k in ("chunks", "rows_grouped", "rows_alone", "max_chunk", "batch_form",
                                   "sort_by_length_sent", "min_confidence_sent", "min_confidence")} == {
        "chunks": 4, "rows_grouped": 2, "rows_alone": 3, "max_chunk": 2, "batch_form": "states",
        "sort_by_length_sent": True, "min_confidence_sent": True, "min_confidence": 0.7}
    assert doc["config"]["errored"] == [{"index": 2, "error": "RuntimeError: runner exploded"}]
    overall = doc["overall"]
    assert overall["choice_accuracy"] == 0.75
    assert math.isclose(overall["ece"], 0.225, abs_tol=1e-9)
    assert math.isclose(overall["aurc"], 0.0625, abs_tol=1e-9)
    states = [(c["answer"]["answer_confidence"], c["answer"]["abstention"]) for c in doc["cases"]]
    assert states == [(0.9, "passed"), (0.6, "abstained"), (0.9, "passed"), (0.9, "passed")]
    assert doc["cases"][1]["answer"]["low_confidence"] is True
    # the sort flag reaches the runner only with a chunk to reorder (S6.12)
    assert [(len(c["states"]), c.get("sort_by_length", False)) for c in runner.calls] == [
        (2, True), (1, False), (1, False), (1, False)]
    con = connect(wh, [rid])
    assert con.execute("SELECT row_index, error, call_returned FROM errors").fetchall() == [
        (2, "RuntimeError: runner exploded", False)]
    assert con.execute("SELECT DISTINCT abstention_threshold FROM cases").fetchall() == [(0.7,)]


def test_t6_3_matches_the_reference_harness(tmp_path):
    """S0.1: the same scripted runner through laya.evals.evaluate gives the same numbers and timing block."""
    from laya import evals
    from laya.confidence import apply_confidence_gate

    double = ExplodingRunnerDouble()

    class Adapter:                       # the reference's runner shape over the same double
        def predict(self, state, questions, model=None, min_confidence=None):
            return self.predict_batch([state], questions, min_confidence=min_confidence)[0]

        def predict_batch(self, states, questions, model=None, batch_size=None, sort_by_length=False,
                          min_confidence=None):
            results = double.predict_batch(states, questions)
            apply_confidence_gate(results, min_confidence)
            return results

    ref = evals.evaluate(Adapter(), evals.Dataset.from_jsonl(DS_BATCH), batch_size=2, on_error="skip",
                         sort_by_length=True, min_confidence=0.7).to_json()
    wh, rid, _ = _t63(tmp_path)
    ours = _report(wh, rid)
    assert ours["config"]["timing"] == ref["config"]["timing"]
    assert ours["config"]["errored"] == ref["config"]["errored"]
    assert ours["config"]["questions_sha256"] == ref["config"]["questions_sha256"]
    strip = (lambda m: {k: v for k, v in m.items() if not k.endswith("_ms")})
    assert strip(ours["overall"]).keys() == strip(ref["overall"]).keys()
    for key, value in strip(ref["overall"]).items():
        assert math.isclose(ours["overall"][key], value, abs_tol=1e-9), key
    assert [c["answer"] for c in ours["cases"]] == [c["answer"] for c in ref["cases"]]


# ---------------------------------------------------------------------------- S3.15 via a fake clock
@pytest.mark.slow
def test_batching_raises_latency_and_lowers_cost_per_decision(tmp_path):
    """S3.15: a call of n rows costs 10 + 2n ms; N=4 over 8 identical rows -> latency 18, cost 4.5."""
    rows = [json.loads(open(DS_BATCH).readline())] * 8
    data = write_jsonl(tmp_path / "same.jsonl", rows)
    wh = Warehouse(tmp_path / "wh")
    metrics = {}
    for n in (1, 4):
        clock = FakeClock()
        rid = execute(wh, RunOptions(str(data), batch_size=n, run_id="n%d" % n),
                      runner=TimedRunnerDouble(clock=clock), clock=clock).run_id
        metrics[n] = _report(wh, rid)["overall"]
    assert metrics[1]["latency_p50_ms"] == pytest.approx(12.0) == metrics[1]["cost_per_decision_p50_ms"]
    assert metrics[4]["latency_p50_ms"] == pytest.approx(18.0)
    assert metrics[4]["cost_per_decision_p50_ms"] == pytest.approx(4.5)
    assert metrics[4]["latency_p50_ms"] > metrics[1]["latency_p50_ms"]
    assert metrics[4]["cost_per_decision_p95_ms"] < metrics[1]["cost_per_decision_p95_ms"]


# ---------------------------------------------------------------------------- errors and exit codes
def test_on_error_fail_exits_1_and_commits_nothing(tmp_path, doubles_registered):
    """S6.7 / S6.10: a runner exception under fail exits 1; the warehouse stays empty."""
    wh = tmp_path / "wh"
    res = _invoke("run", DS_BATCH, "--model", "exploding-double", "--batch-size", "2", "-w", str(wh))
    assert res.exit_code == 1
    assert "laya-cases: runner failed on row 2: RuntimeError: runner exploded" in res.stderr
    assert Warehouse(wh).run_ids() == []
    assert not (wh / "_staging").exists() or not any((wh / "_staging").iterdir())


def test_crash_exit_code_is_opt_in_and_one_line(tmp_path, doubles_registered):
    """S9.7: --crash-exit-code 3 exits 3 with exactly one stderr line, no traceback."""
    res = _invoke("run", DS_BATCH, "--model", "exploding-double", "--crash-exit-code", "3",
                  "-w", str(tmp_path / "wh"))
    assert res.exit_code == 3
    assert res.stderr.strip().splitlines() == ["laya-cases: runner failed on row 2: RuntimeError: runner exploded"]
    bad = _invoke("run", DS_BATCH, "--model", "exploding-double", "--crash-exit-code", "1",
                  "-w", str(tmp_path / "wh"))
    assert bad.exit_code == 2


def test_skip_reports_the_rest_and_the_report_command_agrees(tmp_path, doubles_registered):
    """S6.10 skip: the failed row is an error record; `report` reprints the run's output byte for byte."""
    wh = str(tmp_path / "wh")
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    res = _invoke("run", DS_BATCH, "--model", "exploding-double", "--on-error", "skip", "--run-id", "s",
                  "--json", str(out1), "--slice", "language", "-w", wh)
    assert res.exit_code == 0, res.stderr
    again = _invoke("report", "s", "--json", str(out2), "--slice", "language", "-w", wh)
    assert again.exit_code == 0
    assert res.stdout == again.stdout and out1.read_bytes() == out2.read_bytes()
    doc = json.loads(out1.read_text())
    assert doc["config"]["errored"] == [{"index": 2, "error": "RuntimeError: runner exploded"}]
    assert doc["config"]["model"] == "exploding-double"
    assert doc["extensions"]["run"]["n_errors"] == 1 and len(doc["cases"]) == 4


def test_runner_options_reach_the_constructor_and_the_config(tmp_path, doubles_registered):
    """`--runner-option KEY=VALUE` is a constructor kwarg (JSON when it parses), recorded in extensions.run
    (never inside the reference-shaped config, S0.2)."""
    out = tmp_path / "r.json"
    res = _invoke("run", DS_BATCH, "--model", "exploding-double", "--on-error", "skip", "--runner-option",
                  "depth=3", "--runner-option", "path=x.onnx", "--json", str(out), "-w", str(tmp_path / "wh"))
    assert res.exit_code == 0, res.stderr
    doc = json.loads(out.read_text())
    assert doc["extensions"]["run"]["runner_options"] == {"depth": 3, "path": "x.onnx"}
    assert "runner_options" not in doc["config"]
    bad = _invoke("run", DS_BATCH, "--runner-option", "colour=red", "-w", str(tmp_path / "wh"))
    assert bad.exit_code == 2 and "the minilm runner takes no option(s) colour" in bad.stderr
    reserved = _invoke("run", DS_BATCH, "--runner-option", "device=cuda", "-w", str(tmp_path / "wh"))
    assert reserved.exit_code == 2 and "use --device" in reserved.stderr


def test_missing_answer_skip_records_it_and_fail_is_a_usage_error(tmp_path, doubles_registered):
    """S6.10: a missing answer is {"index","question","error"} under skip, exit 2 under fail."""
    rows = [json.loads(l) for l in open(DS_BATCH) if l.strip()]
    rows[1]["state"] = "SILENT"
    data = write_jsonl(tmp_path / "silent.jsonl", rows[:2])
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, RunOptions(str(data), on_error="skip"), runner=ExplodingRunnerDouble()).run_id
    assert _report(wh, rid)["config"]["errored"] == [{"index": 1, "question": "intent", "error": "missing answer"}]
    res = _invoke("run", str(data), "--model", "exploding-double", "-w", str(tmp_path / "wh2"))
    assert res.exit_code == 2
    assert "silent.jsonl:2 runner returned no answer for question 'intent'" in res.stderr
    assert Warehouse(tmp_path / "wh2").run_ids() == []


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan"])
def test_min_confidence_out_of_range_is_exit_2(tmp_path, doubles_registered, value):
    """S6.11: the threshold must be a finite real in [0, 1]."""
    res = _invoke("run", DS_BATCH, "--model", "exploding-double", "--min-confidence", value,
                  "-w", str(tmp_path / "wh"))
    assert res.exit_code == 2
    assert "min_confidence must be a float in [0.0, 1.0], got %r" % float(value) in res.stderr


def test_unknown_model_is_exit_2_before_any_row(tmp_path):
    """S6.13: an unknown --model names the choices and loads nothing."""
    res = _invoke("run", DS_BATCH, "--model", "no-such-model", "-w", str(tmp_path / "wh"))
    assert res.exit_code == 2
    assert "unknown model 'no-such-model'; choose one of" in res.stderr
    assert "minilm" in res.stderr and "use-multilingual" in res.stderr
    assert "smollm2" in res.stderr and "--onnx FILE" in res.stderr           # what users pass, not only runners
    assert not (tmp_path / "wh").exists()


def test_row_model_on_a_single_model_runner_is_refused(tmp_path, doubles_registered):
    """S6.13: a row naming a model, no --model, and a runner that cannot take one -> exit 2, first row named."""
    rows = [json.loads(l) for l in open(DS_BATCH) if l.strip()]
    rows[3]["model"] = "english"
    data = write_jsonl(tmp_path / "m.jsonl", rows)
    with pytest.raises(UsageError, match=r"m.jsonl:4 names model 'english'"):
        execute(Warehouse(tmp_path / "wh"), RunOptions(str(data)), runner=SingleModelDouble())
    with pytest.raises(UsageError, match="--device cuda"):
        execute(Warehouse(tmp_path / "wh"), RunOptions(DS_BATCH, device="cuda"), runner=SingleModelDouble())
    # a run-level --model overrides every row (S6.13) and becomes the model slice
    rid = execute(Warehouse(tmp_path / "wh"), RunOptions(str(data), model="x", on_error="skip"), runner=SingleModelDouble()).run_id
    assert list(_report(Warehouse(tmp_path / "wh"), rid)["slices"]["model"]) == ["x"]


class AttributionDouble(ExplodingRunnerDouble):
    """Results naming their model the ways S4.3 reads: routed, top-level (0 too), or not at all."""

    name = "attribution-double"

    def predict_batch(self, states, questions, **kwargs):
        named = [{"routing": {"model": "english"}}, {"model": "laya-rl-agent", "routing": {"model": ""}},
                 {"model": 0}, {}, {"model": None}]
        results = super().predict_batch(states, questions)
        return [dict(r, **named[(len(self.calls) - 1) % len(named)]) for r in results]


@pytest.mark.slow
def test_model_slice_is_the_runners_model_when_no_result_names_one(tmp_path):
    """S4.3 as the reference reads a result (routing.model, else `model`), against laya.evals on the same
    results; where the result names none, the runner's own model (the reference's runners always name
    themselves), so --slice model is never empty."""
    from laya import evals

    rows = [json.loads(l) for l in open(DS_BATCH) if l.strip() and "BOOM" not in l] * 2
    data = write_jsonl(tmp_path / "m.jsonl", rows[:5])
    ours = AttributionDouble()
    rid = execute(Warehouse(tmp_path / "wh"), RunOptions(str(data), on_error="skip"), runner=ours).run_id
    doc = _report(Warehouse(tmp_path / "wh"), rid)
    assert [c["model"] for c in doc["cases"]] == ["english", "laya-rl-agent", 0, "exploding-double",
                                                  "exploding-double"]
    assert sorted(doc["slices"]["model"]) == ["0", "english", "exploding-double", "laya-rl-agent"]

    theirs = AttributionDouble()

    class Adapter:
        def predict(self, state, questions):
            return theirs.predict_batch([state], questions)[0]

    ref = evals.evaluate(Adapter(), evals.Dataset.from_jsonl(str(data))).to_json()
    assert [c["model"] for c in ref["cases"]] == ["english", "laya-rl-agent", 0, None, None]


def test_registry_lists_the_builtins_through_entry_points():
    """Built-in runners use the same entry-point group a plugin uses."""
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group=registry.GROUP)}
    assert {"minilm", "use-multilingual"} <= names
    assert registry.resolve(None)[0] == "minilm"
    assert registry.resolve("sentence-transformers/all-MiniLM-L6-v2")[0] == "minilm"
    with pytest.raises(UsageError, match="unknown model 'zzz'; choose one of"):
        registry.resolve("zzz")


def test_vectorised_answers_match_the_scalar_helper():
    """The embedding runners build answers for a whole call at once; they must equal answer_from_probs (S2.4)."""
    import numpy as np

    from laya_cases.runners.base import answer_from_probs
    from laya_cases.runners.embedding import answers_from_matrix

    rng = np.random.default_rng(0)
    bodies = [{"type": "choice", "criteria": {"a": "x", 5: None, "c": ""}},
              {"type": "choice", "criteria": [True, "b"]},
              {"type": "score", "criteria": ["low", "mid", "high", "max"]},
              {"type": "noul"}]
    for body in bodies:
        k = len(body["criteria"]) if "criteria" in body else 2
        probs = rng.dirichlet(np.full(k, 0.7), size=50)
        probs[0] = 1.0 / k                                  # a full tie: the first label wins
        for digits, summed in ((None, 1e-12), (4, 1e-4)):
            for row, got in zip(probs, answers_from_matrix(body, probs, digits)):
                want = answer_from_probs(body, row.tolist(), digits)
                assert got.keys() == want.keys()
                for key, value in want.items():
                    if key in ("confidence", "score") and body["type"] != "noul":   # numpy vs sequential sums
                        assert abs(got[key] - value) <= summed
                    else:
                        assert got[key] == value, (body, key)
        # unrounded by default (S7.7): what the model computed, not 4 decimals
        plain = answers_from_matrix(body, probs)
        assert [a["answer_confidence"] for a in plain] == np.clip(probs.max(axis=1), 0, 1).tolist()
        if body["type"] != "noul":
            assert [list(a["probabilities"].values()) for a in plain] == probs.tolist()
        else:
            assert [a["noul"] for a in plain] == probs[:, 1].tolist()


# ---------------------------------------------------------------------------- MASSIVE (S7.2, T7.1)
@needs_massive
def test_t7_1_sampler_vectors():
    """T7.1: en-US keys with 4 options, gold indices of rows 1-20, and the digest of 100 key lists."""
    rows4 = list(massive.rows("en-US", 3, n_opts=4, source=MASSIVE))
    assert [list(r["questions"]["intent"]["criteria"]) for r in rows4] == [
        ["qa_factoid", "alarm_set", "general_quirky", "general_greet"],
        ["transport_ticket", "audio_volume_mute", "cooking_recipe", "qa_definition"],
        ["iot_hue_lightchange", "music_settings", "audio_volume_mute", "calendar_remove"]]
    rows20 = list(massive.rows("en-US", 100, source=MASSIVE))
    keys = [list(r["questions"]["intent"]["criteria"]) for r in rows20]
    golds = [k.index(r["expected"]["intent"]) for k, r in zip(keys, rows20)]
    assert golds[:20] == [17, 1, 4, 17, 7, 11, 7, 9, 9, 9, 7, 12, 15, 7, 19, 13, 3, 7, 11, 4]
    digest = hashlib.sha256(json.dumps(keys, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    assert digest == "2bc2d3f1be78c0e8f32d44f51af916279ab69ee469da395da358ba6108d2c9df"
    body = rows20[0]["questions"]["intent"]
    assert body["instructions"] == "What is the user asking for in `utterance`?"
    assert massive.option_text("wire.transfer_failed") == "wire: transfer failed"
    assert rows20[0]["state"] == {"utterance": "wake me up at five am this week"}


@needs_massive
def test_massive_command_writes_a_valid_dataset(tmp_path):
    out = tmp_path / "m.jsonl"
    res = _invoke("massive", "dataset", "en-US", "--rows", "3", "--options", "4", "--out", str(out), "--source", str(MASSIVE))
    assert res.exit_code == 0, res.stderr
    assert cli("validate", str(out), check=True).stdout.strip() == "3 examples, 1 question id(s): intent"
    bad = _invoke("massive", "dataset", "xx-XX", "--out", str(tmp_path / "x.jsonl"), "--source", str(MASSIVE))
    assert bad.exit_code == 2 and not (tmp_path / "x.jsonl").exists()


# ---------------------------------------------------------------------------- real models
@pytest.fixture(scope="module")
def minilm():
    import torch

    torch.set_num_threads(1)             # the machine is shared; one thread is the fast path on 2 cores
    return registry.load("minilm")


def _massive_run(tmp_path, runner, locale: str):
    """The first 300 rows of a MASSIVE locale, run in batches of 32: (warehouse, run id, report)."""
    data = tmp_path / ("%s.jsonl" % locale)
    massive.write(locale, data, n_rows=300, source=MASSIVE)
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, RunOptions(str(data), batch_size=32, run_id=locale), runner=runner).run_id
    doc = _report(wh, rid)
    assert doc["extensions"]["overall"]["choice_accuracy"]["n"] == 300
    return wh, rid, doc


@pytest.mark.slow
@needs_massive
def test_minilm_beats_chance_on_massive_en_us(tmp_path, minilm):
    """Issue acceptance: MiniLM over MASSIVE en-US, first 300 rows, 20 options: well above 1/20."""
    wh, rid, doc = _massive_run(tmp_path, minilm, "en-US")
    assert doc["overall"]["choice_accuracy"] > 0.25
    assert doc["extensions"]["run"]["temperature"] == 0.05 and "softmax" in doc["extensions"]["run"]["decision_rule"]
    assert connect(wh, [rid]).execute("SELECT DISTINCT temperature FROM cases").fetchall() == [(0.05,)]


@pytest.mark.slow
@needs_massive
def test_minilm_sort_by_length_changes_no_answer(tmp_path, minilm):
    """S6.12: --sort-by-length reorders work inside the runner, never results."""
    rows = list(massive.rows("en-US", 40, source=MASSIVE))
    body, gold = rows[0]["questions"], rows[0]["expected"]
    for i, row in enumerate(rows):          # one question set, so one gold among its options; mixed lengths
        row["questions"], row["expected"] = body, gold
        row["state"] = {"utterance": " ".join([row["state"]["utterance"]] * (1 + i % 5))}
    data = write_jsonl(tmp_path / "mixed.jsonl", rows)
    minilm.encode_batch_size = 8
    try:
        answers = []
        for sort in (False, True):
            wh = Warehouse(tmp_path / ("wh%d" % sort))
            rid = execute(wh, RunOptions(str(data), batch_size=40, sort_by_length=sort), runner=minilm).run_id
            doc = _report(wh, rid)
            assert doc["config"]["timing"]["sort_by_length_sent"] is sort
            answers.append([c["answer"]["choice"] for c in doc["cases"]])
    finally:
        minilm.encode_batch_size = type(minilm).encode_batch_size
    assert answers[0] == answers[1]


@pytest.mark.slow
@needs_massive
def test_use_multilingual_beats_chance_on_massive_de_de(tmp_path):
    """Issue acceptance: the multilingual embedder over MASSIVE de-DE (English labels), 300 rows."""
    _wh, _rid, doc = _massive_run(tmp_path, registry.load("use-multilingual"), "de-DE")
    assert doc["overall"]["choice_accuracy"] > 0.15


@pytest.mark.slow
def test_cli_run_on_support_offline_is_reproduced_by_report(tmp_path):
    """Issue acceptance: `run data/support.jsonl` offline, then `report RUN` reprints it byte for byte."""
    wh = str(tmp_path / "wh")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    ma, mb = tmp_path / "a.md", tmp_path / "b.md"
    run = cli("run", "data/support.jsonl", "--run-id", "demo", "-w", wh, "--json", str(a), "--markdown", str(ma),
              "--slice", "qid", env=OFFLINE, check=True)
    rep = cli("report", "demo", "-w", wh, "--json", str(b), "--markdown", str(mb), "--slice", "qid", check=True)
    assert run.stdout == rep.stdout
    assert a.read_bytes() == b.read_bytes() and ma.read_bytes() == mb.read_bytes()
    doc = json.loads(a.read_text())
    assert doc["extensions"]["run"]["runner"] == "minilm" and doc["extensions"]["run"]["kind"] == "run"
    assert {"choice_accuracy", "noul_accuracy", "score_mae", "latency_p50_ms"} <= set(doc["overall"])
    assert doc["config"]["dataset_sha256"] == hashlib.sha256((ROOT / "data/support.jsonl").read_bytes()).hexdigest()
    # no progress bar or load noise off a terminal: only where the run went
    assert run.stderr == "laya-cases: committed run demo to %s (laya-cases report demo)\n" % wh
