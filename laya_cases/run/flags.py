"""The `run` command's runner flags as the runner's constructor options (recorded in
extensions.run.runner_options): --runner-option KEY=VALUE pairs plus the shorthands --onnx,
--unclamped and --subfolder."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Sequence, Tuple

from laya_cases.run.options import RunOptions, parse_runner_options
from laya_cases.runners import registry
from laya_cases.runners.onnx_graph import runner_for


def runner_options_from_flags(runner: Optional[str], pairs: Optional[Sequence[str]] = None, *,
                              onnx: Optional[str] = None, unclamped: bool = False,
                              subfolder: Optional[str] = None) -> Tuple[Optional[str], Dict[str, Any]]:
    """(runner name, constructor options). --onnx PATH picks the runner its graph is for unless
    --runner names one: laya-onnx for a Laya checkpoint export (--model is the checkpoint), minilm-onnx
    for an embedder export (--model is the tokenizer source). Raises UsageError on a bad pair or graph."""
    extra = parse_runner_options(pairs)
    if onnx is not None:
        runner = runner or runner_for(str(onnx))
        extra["onnx"] = str(onnx)
    if unclamped:
        extra["unclamped"] = True
    if subfolder is not None:
        extra["subfolder"] = subfolder
    return runner, extra


def exact_laya(opts: RunOptions) -> RunOptions:
    """A Laya checkpoint (or its ONNX export) answers with unrounded probabilities from its logits (the
    `exact` option), as the research harnesses score (S7.7); any other runner, or an `exact` given explicitly, is left as
    it is."""
    name, _cls, _arg = registry.resolve(opts.model, opts.runner)
    if name in ("laya-agent", "laya-onnx") and "exact" not in opts.runner_options:
        return dataclasses.replace(opts, runner_options=dict(opts.runner_options, exact=True))
    return opts
