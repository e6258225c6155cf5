"""ONNX export of the MiniLM embedder and the onnx runner (exports go to tmp dirs only).

fp32: `laya-cases run --model DIR/model.onnx` gives the torch MiniLM runner's predictions on
data/support.jsonl, probabilities within 1e-4 (the runners share embedding.EmbeddingRunner's
decision rule; only the forward differs). INT8 (dynamic, per-channel): runs, and its drift from
fp32 is measured -- non-zero, bounded.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401
from helpers import ROOT
from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.core.identity import file_sha256
from laya_cases.runners.onnx_export import INT8_NAME
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.runners.minilm import MiniLMRunner
from laya_cases.runners.onnx_runner import ONNXRunner
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow

DATASET = ROOT / "data" / "support.jsonl"


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("onnx") / "export"
    result = CliRunner().invoke(app, ["export-onnx", "--out", str(out), "--int8"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert {Path(p).name for p in result.stdout.split()} == {"model.onnx", "model.int8.onnx", "tokenizer.json"}
    return out


@pytest.fixture(scope="module")
def torch_runner() -> MiniLMRunner:
    return MiniLMRunner()


@pytest.fixture(scope="module")
def store(export_dir, torch_runner, tmp_path_factory) -> Warehouse:
    root = tmp_path_factory.mktemp("onnx-store") / "wh"
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", str(export_dir / "model.onnx"),
                                      "-w", str(root), "--run-id", "fp32"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    wh = Warehouse(root)
    execute(wh, RunOptions(dataset=str(DATASET), run_id="torch"), runner=torch_runner)
    result = CliRunner().invoke(app, ["run", str(DATASET), "--onnx", str(export_dir / INT8_NAME), "--model",
                                      "minilm", "-w", str(root), "--run-id", "int8"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    return wh


def _decisions(wh: Warehouse, run_id: str):
    return connect(wh).execute(
        "SELECT case_id, predicted, coalesce(probabilities, [noul_p]) FROM decisions WHERE run_id = ? "
        "ORDER BY case_id", [run_id]).fetchall()


def _max_dp(a, b) -> float:
    return max(max(abs(x - y) for x, y in zip(pa, pb)) for (_, _, pa), (_, _, pb) in zip(a, b))


def test_export_records_what_it_wrote(export_dir):
    meta = json.loads((export_dir / "export.json").read_text())
    assert meta["opset"] == 17 and "QInt8 per_channel" in meta["quantization"][INT8_NAME]
    for name, digest in meta["files"].items():
        assert file_sha256(export_dir / name) == digest


def test_fp32_onnx_matches_torch_minilm(store, export_dir, torch_runner):
    """Same predictions on every case, probabilities within 1e-4 (the embeddings agree to 1e-5)."""
    torch_cases, onnx_cases = _decisions(store, "torch"), _decisions(store, "fp32")
    assert len(torch_cases) == len(onnx_cases) == 48
    assert [c[0] for c in torch_cases] == [c[0] for c in onnx_cases]
    for (_, a, _), (_, b, _) in zip(torch_cases, onnx_cases):   # labels equal; a score (unrounded, S7.7) within 1e-4
        assert a == b or abs(float(a) - float(b)) <= 1e-4, (a, b)
    assert _max_dp(torch_cases, onnx_cases) <= 1e-4 + 1e-12
    texts = [r.state for r in D.load(str(DATASET))]
    fp32 = ONNXRunner(model="minilm", onnx=str(export_dir / "model.onnx"))
    assert np.abs(fp32._embed(texts) - torch_runner._embed(texts)).max() < 1e-5
    run = connect(store).execute("SELECT runner, model_id, settings_json FROM runs WHERE run_id = 'fp32'").fetchone()
    settings = json.loads(run[2])
    assert run[:2] == ("minilm-onnx", "sentence-transformers/all-MiniLM-L6-v2")
    assert settings["decision_rule"] == json.loads(connect(store).execute(
        "SELECT settings_json FROM runs WHERE run_id = 'torch'").fetchone()[0])["decision_rule"]
    assert settings["quantized_ops"] == [] and settings["dtype"] == "float32"


def test_int8_runs_and_its_drift_is_measured(store, export_dir, torch_runner):
    """INT8 moves the embeddings measurably (not bit-identical) but stays close: cosine to the torch
    embedding >= 0.97 per text; the decision-level drift is reported, not pinned."""
    int8 = ONNXRunner(onnx=str(export_dir / INT8_NAME))
    assert int8.info.dtype == "int8 (dynamic)" and "MatMulInteger" in int8.info.settings["quantized_ops"]
    texts = [r.state for r in D.load(str(DATASET))]
    cos = (int8._embed(texts) * torch_runner._embed(texts)).sum(1)
    assert 0.97 <= cos.min() and cos.max() < 1 - 1e-6
    drift = _max_dp(_decisions(store, "fp32"), _decisions(store, "int8"))
    assert 0 < drift < 0.5
    print("INT8 vs fp32: max |dp| %.4f, cosine to torch mean %.4f min %.4f" % (drift, cos.mean(), cos.min()))


def test_onnx_runner_refuses_what_it_cannot_load(tmp_path, export_dir):
    with pytest.raises(UsageError, match="no such file"):
        ONNXRunner(onnx=str(tmp_path / "missing.onnx"))
    with pytest.raises(UsageError, match="no tokenizer.json"):
        ONNXRunner(model=str(tmp_path), onnx=str(export_dir / "model.onnx"))


def test_export_onnx_refuses_a_file_as_out_dir(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    result = CliRunner().invoke(app, ["export-onnx", "--out", str(target)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("laya-cases: --out") and len(result.stderr.splitlines()) == 1


def test_int8_drift_is_visible_in_compare_and_diff(store):
    """Issue acceptance: INT8 drift shows up in `laya-cases compare` (deltas) and `diff` (flips, shift)."""
    root = str(store.root)
    cmp = CliRunner().invoke(app, ["compare", "int8", "--baseline", "fp32", "-w", root])
    assert "mean_confidence" in cmp.stdout and "diff=" in cmp.stdout
    lines = {l.split()[0]: l for l in cmp.stdout.splitlines() if "diff=" in l}
    assert any("diff=+0.0000" not in l and "diff=-0.0000" not in l for l in lines.values()), cmp.stdout
    diff = CliRunner().invoke(app, ["diff", "fp32", "int8", "-w", root])
    assert diff.exit_code in (0, 1), diff.stderr
    assert "compared" in diff.stdout
