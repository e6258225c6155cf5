"""`run --onnx PATH --model CKPT`: a Laya checkpoint's ONNX export scored through laya's ONNXAgent
(runners/laya_onnx.py), the export (`export-onnx --model CKPT`, runners/laya_onnx_export.py), and how
`--onnx` picks between it and a MiniLM embedder export (runners/onnx_graph.py).

The model tests run docs/runners.md's console blocks once (the test checkpoint, tests/laya_checkpoint.py,
exported fp32 and INT8; torch, fp32 and INT8 runs; `diff`) and read its warehouse: fp32 answers as the
torch Agent does, INT8 drifts by a bounded amount, and the reference's own `laya-evals run --onnx` on the
same exports gives the same answer for every case and the same gate verdict.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
import laya_checkpoint
from docs_blocks import run_console
from helpers import ROOT
from laya_cases.core.errors import UsageError
from laya_cases.query.sql import connect
from laya_cases.report import build as R
from laya_cases.run.flags import runner_options_from_flags
from laya_cases.runners import onnx_graph, registry
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

DATASET = ROOT / "data" / "support.jsonl"


def _graph(path: Path, inputs, outputs) -> Path:
    """A tiny graph with these input and output names (Identity nodes; never run)."""
    import onnx
    from onnx import TensorProto, helper

    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, ["b"]) for n in inputs]
    outs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["b"]) for n in outputs]
    nodes = [helper.make_node("Identity", [inputs[i % len(inputs)]], [o]) for i, o in enumerate(outputs)]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", ins, outs)), str(path))
    return path


@pytest.mark.slow             # imports onnx (about a second); the graphs themselves are bytes
def test_onnx_picks_its_runner_from_the_graph(tmp_path):
    laya = _graph(tmp_path / "laya.onnx", onnx_graph.LAYA_INPUTS, onnx_graph.LAYA_OUTPUTS)
    embedder = _graph(tmp_path / "model.onnx", ["input_ids", "attention_mask"], ["embedding"])
    other = _graph(tmp_path / "other.onnx", ["pixels"], ["logits"])
    (tmp_path / "junk.onnx").write_bytes(b"\x00not a graph")
    assert runner_options_from_flags(None, onnx=str(laya)) == ("laya-onnx", {"onnx": str(laya)})
    assert runner_options_from_flags(None, onnx=str(embedder))[0] == "minilm-onnx"
    assert runner_options_from_flags("minilm-onnx", onnx=str(laya))[0] == "minilm-onnx"   # --runner wins
    with pytest.raises(UsageError, match="neither a Laya checkpoint export .* takes pixels and returns logits"):
        onnx_graph.runner_for(str(other))
    with pytest.raises(UsageError, match="not an ONNX model"):
        onnx_graph.runner_for(str(tmp_path / "junk.onnx"))
    with pytest.raises(UsageError, match="no such file"):
        onnx_graph.runner_for(str(tmp_path / "absent.onnx"))
    # `--model laya.onnx` alone: claimed by laya-onnx only to say what it needs; nothing is loaded
    with pytest.raises(UsageError, match="score it with --onnx .* --model CKPT"):
        registry.load(str(laya))
    assert registry.resolve(str(embedder))[0] == "minilm-onnx"


def test_the_old_runner_name_says_what_it_became():
    with pytest.raises(UsageError, match="'minilm-onnx' .* 'laya-onnx'"):
        registry.get_class("onnx")


# ------------------------------------------------------------------------- the model, once per module
@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """docs/runners.md run in a fresh folder holding the test checkpoint as `ckpt/`."""
    pytest.importorskip("laya")
    work = tmp_path_factory.mktemp("laya-onnx")
    laya_checkpoint.build(work / "ckpt")
    run_console((ROOT / "docs" / "runners.md").read_text(encoding="utf-8"), work)
    return work


def _softmax(logits, temperature) -> np.ndarray:
    z = np.asarray(logits, float) / max(0.001, temperature)
    e = np.exp(z - z.max())
    return e / e.sum()


def _decisions(wh: Warehouse, run_id: str):
    rows = connect(wh).execute("SELECT case_id, question_type, predicted, probabilities, logits, temperature, "
                               "answer_json FROM decisions WHERE run_id = ? ORDER BY case_id", [run_id]).fetchall()
    return {r[0]: r[1:] for r in rows}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fp32_answers_as_the_torch_agent_and_int8_drift_is_bounded(page):
    wh = Warehouse(page / "warehouse")
    torch, fp32, int8 = (_decisions(wh, r) for r in ("torch", "fp32", "int8"))
    assert set(torch) == set(fp32) == set(int8) and len(torch) == 48
    drift, flips, centred = [], 0, []
    for case, (kind, predicted, probs, logits, temp, _) in torch.items():
        for run in (fp32, int8):                 # stored probabilities are softmax(logits / T), as served
            _, _, p_run, l_run, t_run, answer = run[case]
            if p_run is not None:
                assert np.allclose(p_run, _softmax(l_run, t_run), atol=5e-5)
            assert json.loads(answer)["type"] == kind
        assert fp32[case][1] == predicted and np.abs(np.subtract(fp32[case][3], logits)).max() < 1e-4
        p_torch, p_int8 = _softmax(logits, temp), _softmax(int8[case][3], int8[case][4])
        drift.append(np.abs(p_torch - p_int8).max())
        flips += int(p_torch.argmax() != p_int8.argmax())
        centred.append((logits - np.mean(logits), int8[case][3] - np.mean(int8[case][3])))
    # INT8 moves probabilities by hundredths (measured: max 0.096, mean 0.037), enough to flip this random
    # head's narrow decisions; its logits still follow torch's (measured r = 0.69; a graph fed the wrong
    # marker positions would be near 0)
    assert 0.0 < max(drift) < 0.15 and np.mean(drift) < 0.06 and flips > 0
    r = np.corrcoef(np.concatenate([a for a, _ in centred]), np.concatenate([b for _, b in centred]))[0, 1]
    assert r > 0.5
    runs = dict(connect(wh).execute("SELECT run_id, settings_json FROM runs").fetchall())
    assert json.loads(runs["fp32"])["quantized_ops"] == [] and json.loads(runs["int8"])["quantized_ops"]
    assert "ONNXAgent.predict_batch" in json.loads(runs["int8"])["decision_rule"]
    assert json.loads(runs["int8"])["export"]["kind"] == "laya checkpoint"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_reference_scores_the_same_exports_the_same(page, capsys):
    """`laya-evals run --onnx PATH --model CKPT --batch-size 16 --min-accuracy 0.4` (in-process) against our run of the
    same export: every case's answer, the overall metrics and the gate verdict (exit 1 both). INT8, the
    export whose answers differ from torch; fp32's are the torch Agent's (the test above)."""
    from laya.evals_cli import main

    wh = Warehouse(page / "warehouse")
    codes = {}
    for run_id, graph in (("int8", "laya.int8.onnx"),):
        out = page / ("reference-%s.json" % run_id)
        code = main(["run", str(DATASET), "--onnx", str(page / "ckpt-onnx" / graph), "--model", str(page / "ckpt"),
                     "--batch-size", "16", "--min-accuracy", "0.4", "--json", str(out)])
        capsys.readouterr()
        reference = json.loads(out.read_text())
        assert reference["config"]["onnx"].endswith(graph)
        ours = R.build(connect(wh), run_id, R.Options(include_cases=True))
        theirs = [(c["qid"], c["answer"]) for c in reference["cases"]]
        mine = [(c["qid"], c["answer"]) for c in ours["cases"]]
        assert len(theirs) == len(mine) == 48
        for (q1, a1), (q2, a2) in zip(theirs, mine):
            assert q1 == q2
            a1 = {k: v for k, v in a1.items() if k != "action"}
            a2 = {k: v for k, v in a2.items() if k != "action"}
            assert a1 == a2, (q1, a1, a2)
        for metric in ("choice_accuracy", "noul_accuracy", "score_mae", "mean_confidence", "ece"):
            assert ours["overall"][metric] == pytest.approx(reference["overall"][metric], abs=1e-9), metric
        codes[run_id] = code
        assert code == (1 if ours["overall"]["choice_accuracy"] < 0.4 else 0)
    assert codes["int8"] == 1                   # as our gated int8 run exits on the page
    # a checkpoint that does not load is named as the export's source: a usage error, before any row
    with pytest.raises(UsageError, match="--model .*absent: the checkpoint .*laya.onnx was exported from"):
        registry.load(str(page / "absent"), runner="laya-onnx", onnx=str(page / "ckpt-onnx" / "laya.onnx"))


@pytest.mark.slow             # the CLI command and its imports
def test_export_of_what_is_not_a_checkpoint_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["export-onnx", "--model", str(tmp_path / "absent"),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "not a Laya checkpoint" in result.stderr
    assert not (tmp_path / "out").exists()


def test_massive_asks_the_onnx_export_for_unrounded_probabilities_as_it_asks_the_checkpoint():
    from laya_cases.run.flags import exact_laya
    from laya_cases.run.options import RunOptions

    for runner in ("laya-agent", "laya-onnx"):
        opts = RunOptions(dataset="massive", model="ckpt", runner=runner, runner_options={"onnx": "laya.onnx"})
        assert exact_laya(opts).runner_options == {"onnx": "laya.onnx", "exact": True}
    assert "exact" not in exact_laya(RunOptions(dataset="massive", runner="minilm-onnx")).runner_options
