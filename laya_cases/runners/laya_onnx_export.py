"""Export a Laya checkpoint to ONNX (`laya-cases export-onnx --model CKPT --out DIR [--int8]`).

The graph is the checkpoint's whole decision model (`laya.common.DecisionModel`: encoder, typed head,
act head) with the interface `laya.onnx_agent.ONNXAgent` feeds: inputs input_ids, attention_mask,
marker_pos (int64), marker_mask (bool), qtype (int64), dynamic batch, sequence and option axes;
outputs logits (batch, options) and act_logits. ONNXAgent itself reads the config and tokenizer from
the checkpoint and does all the decoding (temperatures, softmax), so `run --onnx DIR/laya.onnx
--model CKPT` differs from the torch Agent only in the forward. The laya package ships no exporter
(ONNXAgent's error names an `export_onnx.py` it does not install), so this is ours:
`torch.onnx.export(..., opset_version=17, dynamo=False)` of `Agent(CKPT, device="cpu").model` in
fp32, with torch's fused TransformerEncoderLayer fast path off for the trace (its fused op has no
ONNX form; the unfused layer is the same maths). The trace uses three options per question:
DecisionModel's one-option branch is a Python `if` a trace bakes in, and ONNXAgent always feeds at
least two marker columns. `--int8` adds the same dynamic per-channel INT8 copy as the MiniLM export.

DIR receives `laya.onnx` (ONNXAgent's default name), optionally `laya.int8.onnx`, and `export.json`
(the checkpoint, its weight file's SHA-256, opset, the files' SHA-256s).
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Dict, Optional

from laya_cases.core.errors import UsageError
from laya_cases.core.identity import file_sha256
from laya_cases.runners.laya_agent import LayaAgentRunner
from laya_cases.runners.onnx_export import META_NAME, OPSET, QUANTIZATION, quantize
from laya_cases.runners.onnx_graph import LAYA_INPUTS, LAYA_OUTPUTS

FP32_NAME = "laya.onnx"
INT8_NAME = "laya.int8.onnx"
_AXES = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
         "marker_pos": {0: "batch", 1: "options"}, "marker_mask": {0: "batch", 1: "options"},
         "qtype": {0: "batch"}, "logits": {0: "batch", 1: "options"}, "act_logits": {0: "batch"}}


def _sample(pad_id: int) -> tuple:
    """Three rows (one per question type), the last one padded; three options each."""
    import torch

    ids = torch.arange(1000, 1048, dtype=torch.long).reshape(3, 16)
    att = torch.ones(3, 16, dtype=torch.long)
    att[2, 12:] = 0
    ids[2, 12:] = pad_id
    pos = torch.tensor([[1, 2, 3], [2, 4, 6], [3, 5, 7]], dtype=torch.long)
    mask = torch.tensor([[True, True, True], [True, True, False], [True, True, True]])
    return ids, att, pos, mask, torch.tensor([0, 1, 2], dtype=torch.long)


def export(checkpoint: str, out: str, int8: bool = False, subfolder: Optional[str] = None) -> Dict[str, Any]:
    """Write the export of `checkpoint` into `out` (created) and return what `export.json` records."""
    from importlib.metadata import version

    if not LayaAgentRunner.accepts(checkpoint):     # before torch is imported
        raise UsageError("--model %s: not a Laya checkpoint (a directory holding rl_agent_config.json, or a hub id)"
                         % checkpoint)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from laya.agent import Agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the Agent's temperature warning is about serving, not the graph
        try:
            agent = Agent(checkpoint, device="cpu", subfolder=subfolder)
        except Exception as exc:                # nothing written yet: a usage error, exit 2
            raise UsageError("--model %s cannot be loaded as a Laya checkpoint: %s: %s"
                             % (checkpoint, type(exc).__name__, exc)) from None
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = agent.model.float().eval()
    fp32 = out_dir / FP32_NAME
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")     # TorchScript exporter deprecation; checked against torch by the tests
            torch.onnx.export(model, _sample(agent.tok.pad_token_id), str(fp32), input_names=list(LAYA_INPUTS),
                              output_names=list(LAYA_OUTPUTS), dynamic_axes=_AXES, opset_version=OPSET,
                              dynamo=False)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    files = {FP32_NAME: file_sha256(fp32)}
    if int8:
        quantize(fp32, out_dir / INT8_NAME)
        files[INT8_NAME] = file_sha256(out_dir / INT8_NAME)
    weights = Path(checkpoint, subfolder or "", "model.safetensors")      # a local checkpoint's weights
    meta = {"kind": "laya checkpoint", "checkpoint": checkpoint, "subfolder": subfolder,
            "revision": agent.revision,
            "checkpoint_sha256": file_sha256(weights) if weights.is_file() else None,
            "laya": version("laya"), "opset": OPSET,
            "exporter": "torch.onnx.export(dynamo=False), torch %s" % torch.__version__,
            "inputs": list(LAYA_INPUTS), "outputs": list(LAYA_OUTPUTS),
            "scored_by": "laya.onnx_agent.ONNXAgent (run --onnx %s --model %s)" % (FP32_NAME, checkpoint),
            "quantization": {INT8_NAME: QUANTIZATION % version("onnxruntime")} if int8 else {},
            "files": files}
    (out_dir / META_NAME).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta
