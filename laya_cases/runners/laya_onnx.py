"""A Laya checkpoint's ONNX export scored through `laya.onnx_agent.ONNXAgent`, the reference's `--onnx` path.

`laya-cases run DATASET --onnx DIR/laya.onnx --model CKPT` (export: `laya-cases export-onnx --model CKPT
--out DIR [--int8]`, laya_onnx_export.py): as `laya-evals run --onnx PATH --model CKPT`, the config,
temperatures and tokenizer come from the checkpoint the export was made from and the forward from the
graph (fp32 `laya.onnx` or the INT8 `laya.int8.onnx`). Everything after the forward is the
laya-agent runner's (laya_agent.py): answers straight from `ONNXAgent.predict_batch`, the bucket
temperatures and raw option logits recorded per decision (ONNXAgent has the Agent's `_encode_state`
/ `_decode_answers` seams), `--unclamped` and `exact=true` alike. So a run of the export and a run of
the checkpoint differ only by the forward, and `laya-cases diff` shows what the export (INT8 above
all) changed, case by case.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from laya_cases.core import questions as Q
from laya_cases.core.errors import UsageError
from laya_cases.core.identity import file_sha256
from laya_cases.runners import onnx_graph
from laya_cases.runners.base import Capabilities
from laya_cases.runners.laya_agent import DEFAULT_MODEL, LayaAgentRunner
from laya_cases.runners.onnx_export import META_NAME


class LayaONNXRunner(LayaAgentRunner):
    name = onnx_graph.LAYA_RUNNER
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES, devices=("cpu",),
                                min_confidence=True, per_row_model=False)

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A Laya export given as `--model`: claimed only to say how to score it (see __init__)."""
        return (isinstance(model, str) and model.endswith(".onnx") and os.path.isfile(model)
                and onnx_graph.read(model).is_laya)

    def __init__(self, model: str = DEFAULT_MODEL, onnx: Optional[str] = None, device: Optional[str] = None,
                 revision: Optional[str] = None, subfolder: Optional[str] = None, **options: Any) -> None:
        if onnx is None:
            raise UsageError("--model %s is a Laya checkpoint export: score it with --onnx %s --model CKPT, CKPT "
                             "the checkpoint it was exported from (its config and tokenizer)" % (model, model)
                             if str(model).endswith(".onnx") else
                             "the laya-onnx runner needs --onnx PATH (laya-cases export-onnx --model CKPT)")
        graph = onnx_graph.read(onnx)
        if not graph.is_laya:
            raise UsageError("--onnx %s: not a Laya checkpoint export (no %s inputs)"
                             % (onnx, "/".join(onnx_graph.LAYA_INPUTS[2:])))
        if (device or "cpu") != "cpu":
            raise UsageError("--device %s: the laya-onnx runner runs on cpu" % device)
        self.onnx, self._graph = str(onnx), graph
        try:
            super().__init__(model, device="cpu", revision=revision, subfolder=subfolder, **options)
        except (OSError, ValueError) as exc:      # the checkpoint: missing, not cached, not a Laya one
            raise UsageError("--model %s: the checkpoint %s was exported from (its config and tokenizer; default "
                             "%s, as laya-evals) cannot be loaded: %s: %s"
                             % (model, onnx, DEFAULT_MODEL, type(exc).__name__, exc)) from None
        import onnxruntime as ort

        meta = Path(onnx).parent / META_NAME
        self.info.settings.update({
            "onnx": self.onnx, "onnx_sha256": file_sha256(Path(onnx)), "quantized_ops": list(graph.quantized_ops),
            "onnxruntime": ort.__version__, "providers": self.agent.session.get_providers(),
            "export": json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else None})

    def _load_agent(self, model: str, device: str, revision: Optional[str], subfolder: Optional[str]) -> Any:
        from laya.onnx_agent import ONNXAgent

        return ONNXAgent(model, onnx_path=self.onnx, revision=revision, subfolder=subfolder)

    def _device(self) -> str:
        # ONNXAgent takes CUDA by itself where onnxruntime offers it; record what the session runs on.
        return "cuda" if self.agent.session.get_providers()[0] == "CUDAExecutionProvider" else "cpu"

    def _dtype(self) -> str:
        return "int8 (dynamic)" if self._graph.quantized_ops else "float32"
