"""The MASSIVE harness on real inference (slow): a locally built Laya checkpoint clamped and
unclamped (issue 9 acceptance), and MiniLM over en, de, fr.

The checkpoint (tests/laya_checkpoint.py) ships `choice:3-5` at 0.1006, which the Agent clamps to
0.5: with 4 options the two regimes apply different temperatures. Temperature never moves a
prediction, so n, accuracy and macro-F1 agree and ECE differs; every decision stores the raw
logits and both temperatures, so each regime's block re-derives from the store with no model.
"""
from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401
import laya_checkpoint
from helpers import needs_shared_data, shared_data
from laya_cases.report import build as R
from laya_cases.harness.massive import document, metrics
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              needs_shared_data("massive", "test", "en-US.jsonl")]
MASSIVE = shared_data("massive", "test")


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def laya_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("massive-laya")
    checkpoint = laya_checkpoint.build(base / "en")
    root = base / "wh"
    for rid, extra in (("clamped", []), ("unclamped", ["--unclamped"])):
        res = _invoke("massive", "run", "--model", str(checkpoint), "--langs", "en,de", "--per-lang", "8",
                      "--n-opts", "4", "--data", str(MASSIVE), "-w", str(root), "--run-id", rid, *extra)
        assert res.exit_code == 0, (res.stderr, res.exception)
        assert [l.split()[0] for l in res.stdout.splitlines()] == ["en", "de", "macro"]
    return Warehouse(root)


def test_clamped_and_unclamped_agree_on_accuracy_and_macro_f1_not_on_ece(laya_store):
    docs = {rid: document.build(laya_store, rid) for rid in ("clamped", "unclamped")}
    for lang in ("en", "de"):
        a, b = docs["clamped"]["report"][lang], docs["unclamped"]["report"][lang]
        assert a["n"] == b["n"] == 8
        assert (a["accuracy"], a["macro_f1"]) == (b["accuracy"], b["macro_f1"])
        assert a["ece"] != b["ece"] and a["mean_confidence"] != b["mean_confidence"]
        assert (a["temperature"], b["temperature"]) == (0.5, 0.1006)
    cases = {rid: docs[rid]["cases"] for rid in docs}
    assert [c["pred_index"] for c in cases["clamped"]] == [c["pred_index"] for c in cases["unclamped"]]
    for c in cases["clamped"]:
        assert len(c["logits"]) == 4 and (c["temperature_clamped"], c["temperature_unclamped"]) == (0.5, 0.1006)
        # stored confidences are unrounded (exact=true): max softmax(z / T) of the stored logits
        z = [x / c["temperature"] for x in c["logits"]]
        assert c["confidence"] == pytest.approx(1 / sum(math.exp(x - max(z)) for x in z), abs=1e-12)
    settings = json.loads(connect(laya_store, ["clamped"]).execute("SELECT settings_json FROM runs").fetchone()[0])
    assert settings["exact_probabilities"] is True and settings["runner_options"]["exact"] is True


def test_both_regimes_re_derive_from_the_stored_logits_with_no_model(laya_store):
    """`massive report RUN --regime R` (sql/massive/rederive.sql) over either run gives run R's block."""
    for source in ("clamped", "unclamped"):
        for regime in ("clamped", "unclamped"):
            derived = document.build(laya_store, source, regime=regime)["report"]
            stored = document.build(laya_store, regime)["report"]
            for lang in ("en", "de"):
                keep = ("n", "accuracy", "macro_f1", "ece", "mean_confidence", "acc_at_50_coverage",
                        "acc_at_50_tie_straddle", "selective_accuracy@50", "temperature")
                assert {k: derived[lang][k] for k in keep} == {k: stored[lang][k] for k in keep}, (source, regime)
    res = _invoke("massive", "report", "clamped", "--regime", "unclamped", "-w", str(laya_store.root))
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 3


def test_minilm_over_en_de_fr_one_run_report_slice_agrees(tmp_path):
    """Acceptance, small: `massive run --model minilm --langs en,de,fr` prints three language lines and
    the macro line; its accuracies are `report --slice language`'s."""
    root = str(tmp_path / "wh")
    res = _invoke("massive", "run", "--model", "minilm", "--langs", "en,de,fr", "--per-lang", "10",
                  "--data", str(MASSIVE), "-w", root, "--run-id", "mini", "--batch-size", "8")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert [l.split()[0] for l in lines] == ["en", "de", "fr", "macro"]
    wh = Warehouse(root)
    rep = R.build(connect(wh, ["mini"]), "mini", R.Options(include_cases=False))
    doc = document.build(wh, "mini")
    for lang in ("en", "de", "fr"):
        assert doc["report"][lang]["accuracy"] == round(rep["slices"]["language"][lang]["choice_accuracy"], 4)
        assert "%-6s n=10 acc=%.4f" % (lang, doc["report"][lang]["accuracy"]) in res.stdout
    assert doc["report"]["en"]["accuracy"] > 0.2            # well above chance (1/20) on English
    assert metrics.summary(doc["report"])["languages"] == 3


def test_laya_runner_logits_re_derive_the_agents_answers_for_every_type(tmp_path):
    """The laya-agent runner's stored facts (read during the Agent's own forward pass): softmax of
    logits / temperature gives the Agent's (4-decimal) probabilities for choice, score and noul;
    the clamped and unclamped temperatures are the bucket's served and shipped values."""
    from laya_cases.runners.laya_agent import LayaAgentRunner, softmax
    from helpers import ROOT

    rows = [json.loads(l) for l in (ROOT / "data" / "support.jsonl").read_text().splitlines() if l.startswith("{")]
    runner = LayaAgentRunner(str(laya_checkpoint.build(tmp_path / "en")), batch_size=3)
    seen = set()
    for row in rows[:6]:
        [result] = runner.predict_batch([row["state"]], row["questions"])
        for qid, answer in result["answers"].items():
            facts = result["facts"][qid]
            p = softmax(facts["logits"], facts["temperature"])
            if answer["type"] == "noul":
                assert abs(p[1] - answer["noul"]) <= 5e-5
            else:
                assert max(abs(a - b) for a, b in zip(p, answer["probabilities"].values())) <= 5e-5
            assert facts["temperature"] == facts["temperature_clamped"]
            seen.add((answer["type"], facts["temperature_bucket"], facts["temperature_clamped"],
                      facts["temperature_unclamped"]))
    assert {s[0] for s in seen} == {"choice", "score", "noul"}
    assert ("score", "score:3-5", 5.0, 7.5) in seen
