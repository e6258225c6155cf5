"""Which export an ONNX file holds, read from its graph's inputs and outputs (the graph is never run).

A Laya checkpoint export (laya_onnx_export.py) is the graph `laya.onnx_agent.ONNXAgent` feeds:
inputs input_ids, attention_mask, marker_pos, marker_mask, qtype; outputs logits, act_logits. A
MiniLM embedder export (onnx_export.py) takes input_ids and attention_mask and returns embedding.
The two share no output name, so `--onnx PATH` picks its runner from the file alone: `laya-onnx`
(scored through ONNXAgent, `--model` the checkpoint) or `minilm-onnx` (`--model` the tokenizer).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Tuple

from laya_cases.core.errors import UsageError

LAYA_INPUTS = ("input_ids", "attention_mask", "marker_pos", "marker_mask", "qtype")
LAYA_OUTPUTS = ("logits", "act_logits")
EMBEDDER_OUTPUTS = ("embedding",)
LAYA_RUNNER, EMBEDDER_RUNNER = "laya-onnx", "minilm-onnx"
#: Operators only a dynamically quantised (INT8) graph contains.
QUANT_OPS = frozenset({"DynamicQuantizeLinear", "MatMulInteger", "QLinearMatMul", "DequantizeLinear"})


@dataclass(frozen=True)
class Graph:
    inputs: Tuple[str, ...]             # graph inputs that are fed (initialisers left out)
    outputs: Tuple[str, ...]
    quantized_ops: Tuple[str, ...]      # sorted; empty for an fp32 graph

    @property
    def is_laya(self) -> bool:
        return set(LAYA_INPUTS) <= set(self.inputs) and set(LAYA_OUTPUTS) <= set(self.outputs)

    @property
    def is_embedder(self) -> bool:
        return set(EMBEDDER_OUTPUTS) <= set(self.outputs)


def read(path: str) -> Graph:
    """The graph's interface; UsageError when `path` is missing or not an ONNX model."""
    if not os.path.isfile(path):
        raise UsageError("--onnx %s: no such file" % path)
    import onnx
    from google.protobuf.message import DecodeError

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except (DecodeError, ValueError, OSError) as exc:
        raise UsageError("--onnx %s: not an ONNX model (%s)" % (path, exc)) from None
    fed = {i.name for i in graph.initializer}
    return Graph(inputs=tuple(i.name for i in graph.input if i.name not in fed),
                 outputs=tuple(o.name for o in graph.output),
                 quantized_ops=tuple(sorted({n.op_type for n in graph.node} & QUANT_OPS)))


def runner_for(path: str) -> str:
    """`laya-onnx` for a Laya checkpoint export, `minilm-onnx` for an embedder export, else UsageError."""
    graph = read(path)
    if graph.is_laya:
        return LAYA_RUNNER
    if graph.is_embedder:
        return EMBEDDER_RUNNER
    raise UsageError("--onnx %s: neither a Laya checkpoint export (inputs %s; outputs %s) nor a MiniLM embedder "
                     "export (output embedding); this graph takes %s and returns %s (see laya-cases export-onnx)"
                     % (path, ", ".join(LAYA_INPUTS), ", ".join(LAYA_OUTPUTS), ", ".join(graph.inputs) or "nothing",
                        ", ".join(graph.outputs) or "nothing"))
