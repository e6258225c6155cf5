"""The laya-agent runner on a local Laya-format checkpoint (tests/laya_checkpoint.py, a test double).

Answers come straight from the real `laya.Agent` (temperatures clamped as served, S2.6); every
decision records the temperature applied and its bucket; `unclamped=True` uses the checkpoint's raw
temperatures, which moves confidences and ECE but never a prediction (temperature scaling is
monotone). A local checkpoint records no revision.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
import laya_checkpoint
from helpers import ROOT
from laya_cases.report import build as R
from laya_cases.runners.laya_agent import LayaAgentRunner, unclamped_temperature
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]   # the Agent warns on out-of-range temperatures
DATASET = ROOT / "data" / "support.jsonl"


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory) -> Path:
    return laya_checkpoint.build(tmp_path_factory.mktemp("laya-checkpoint") / "en")


@pytest.fixture(scope="module")
def store(checkpoint, tmp_path_factory) -> Warehouse:
    """Two runs of the same checkpoint through `laya-cases run`: served (clamped) and `--unclamped`."""
    root = tmp_path_factory.mktemp("laya-store") / "wh"
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", str(checkpoint), "-w", str(root),
                                      "--run-id", "clamped", "--batch-size", "8"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", str(checkpoint.parent), "--subfolder",
                                      checkpoint.name, "--unclamped", "-w", str(root), "--run-id", "unclamped",
                                      "--batch-size", "8"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    return Warehouse(root)


def _cases(wh: Warehouse, run_id: str):
    con = connect(wh)
    return con.execute(
        "SELECT case_id, qid, question_type, predicted, probabilities, confidence, temperature, "
        "temperature_bucket, answer_json FROM decisions WHERE run_id = ? ORDER BY case_id", [run_id]).fetchall()


def test_unclamped_temperature_rule_s2_6():
    """Raw values are used as shipped; what clamp_temperature would replace by 1.0 stays 1.0 (S2.6)."""
    assert unclamped_temperature(0.1006) == 0.1006
    assert unclamped_temperature(7.5) == 7.5
    assert unclamped_temperature("2.5") == 2.5
    assert unclamped_temperature(-1) == 0.001               # the S7.4 floor, not a sign flip
    for bad in (True, None, "x", float("nan"), float("inf")):
        assert unclamped_temperature(bad) == 1.0


def test_accepts_checkpoint_directories_and_hub_ids(checkpoint, tmp_path):
    assert LayaAgentRunner.accepts(str(checkpoint))
    assert LayaAgentRunner.accepts(str(checkpoint.parent))          # holds a checkpoint subfolder
    assert LayaAgentRunner.accepts("convaiinnovations/laya")
    assert not LayaAgentRunner.accepts(str(tmp_path))
    assert not LayaAgentRunner.accepts("minilm")


def test_run_writes_the_agents_answers_with_clamped_temperatures_s2_6(store, checkpoint):
    """`laya-cases run --model <checkpoint dir>`: the stored answers are the Agent's own, and each
    decision records the clamped bucket temperature it was decoded with."""
    import laya

    rows = [json.loads(line) for line in DATASET.read_text().splitlines() if line.startswith("{")]
    direct = laya.Agent(str(checkpoint), device="cpu").predict(rows[0]["state"], rows[0]["questions"])["answers"]
    con = connect(store)
    stored = dict(con.execute("SELECT qid, answer_json FROM decisions WHERE run_id = 'clamped' AND row_index = 0")
                  .fetchall())
    for qid, answer in direct.items():
        got = json.loads(stored[qid])
        assert got["probabilities" if "probabilities" in answer else "noul"] == \
            answer["probabilities" if "probabilities" in answer else "noul"]
        assert got["answer_confidence"] == answer["answer_confidence"]
    temps = set(con.execute("SELECT DISTINCT question_type, temperature_bucket, temperature FROM decisions "
                            "WHERE run_id = 'clamped'").fetchall())
    # choice:6-10 ships 0.2 -> 0.5; score:3-5 ships 7.5 -> 5.0; noul:2 ships 0.8 (in range)
    assert temps == {("choice", "choice:6-10", 0.5), ("score", "score:3-5", 5.0), ("noul", "noul:2", 0.8)}
    run = con.execute("SELECT runner, model_id, model_revision, settings_json FROM runs WHERE run_id = 'clamped'") \
        .fetchone()
    assert run[:3] == ("laya-agent", str(checkpoint), None)
    settings = json.loads(run[3])
    assert settings["temperatures"] == "clamped" and "clamped to [0.5, 5]" in settings["decision_rule"]


def test_unclamped_moves_confidence_and_ece_never_predictions(store):
    """Same argmax and the same noul side for every case; raw temperatures recorded per decision;
    confidences differ where the raw value was out of range, and so does ECE."""
    clamped, unclamped = _cases(store, "clamped"), _cases(store, "unclamped")
    assert [c[0] for c in clamped] == [u[0] for u in unclamped] and len(clamped) == 48
    moved = 0
    for c, u in zip(clamped, unclamped):
        if c[2] in ("choice", "noul"):
            assert c[3] == u[3]                                          # predicted
        if c[4] is not None:
            assert max(range(len(c[4])), key=c[4].__getitem__) == max(range(len(u[4])), key=u[4].__getitem__)
        moved += c[5] != u[5]
    assert moved >= 32                                                   # every choice and score case
    temps = {(u[7], u[6]) for u in unclamped}
    assert temps == {("choice:6-10", 0.2), ("score:3-5", 7.5), ("noul:2", 0.8)}

    reports = {rid: R.build(connect(store), rid, R.Options(include_cases=False)) for rid in ("clamped", "unclamped")}
    a, b = reports["clamped"]["overall"], reports["unclamped"]["overall"]
    assert a["choice_accuracy"] == b["choice_accuracy"] and a["noul_accuracy"] == b["noul_accuracy"]
    assert not math.isclose(a["ece"], b["ece"], abs_tol=1e-6)
    assert not math.isclose(a["mean_confidence"], b["mean_confidence"], abs_tol=1e-6)
    assert reports["unclamped"]["extensions"]["run"]["temperatures"] == "unclamped"


def test_subfolder_missing_is_a_load_error(checkpoint):
    with pytest.raises(FileNotFoundError):
        LayaAgentRunner(str(checkpoint.parent), subfolder="multilingual")
