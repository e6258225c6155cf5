"""What a run is asked to do (RunOptions), checked before anything loads (S6.7-S6.13 flags)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten
from laya_cases.run import resume as RS
from laya_cases.store.layout import validate_run_id

#: Copied from the reference (laya/evals.py, `evaluate`): what the two timing metrics mean.
LATENCY_METRIC = "per request: the wall time of the call that returned it, unsplit"


COST_METRIC = "per decision: that call divided by its own chunk size"


BATCH_STATES = "states"


@dataclass
class RunOptions:
    dataset: str
    model: Optional[str] = None              # None: the default runner, rows keep their own `model`
    batch_size: Optional[int] = None
    sort_by_length: bool = False
    min_confidence: Optional[float] = None
    on_error: str = "fail"
    device: Optional[str] = None
    revision: Optional[str] = None
    run_id: Optional[str] = None
    crash_exit_code: Optional[int] = None
    runner_options: Dict[str, Any] = field(default_factory=dict)   # extra constructor kwargs (--runner-option)
    runner: Optional[str] = None             # --runner NAME: pick the runner, --model is its model
    resume: bool = False                     # --resume: continue the incomplete run `run_id` (resume.py)
    commit_every: Optional[int] = None       # dataset rows between chunk commits [COMMIT_ROWS]; 0: never
    commit_seconds: Optional[float] = None   # seconds between chunk commits [COMMIT_SECONDS]; 0: never
    limit: Optional[int] = None              # --limit N: a smoke run over the first N kept rows only
    shard: Optional[Tuple[int, int]] = None  # --shard I/N: score shard I of N of run `run_id` (shard.py)


_RESERVED = ("model", "device", "revision", "batch_size")


def parse_runner_options(pairs: Any) -> Dict[str, Any]:
    """`KEY=VALUE` pairs -> constructor kwargs; VALUE is JSON when it parses (`true`, `3`), else text."""
    out: Dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = str(pair).partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise UsageError("--runner-option expects KEY=VALUE, got %s" % shorten(repr(pair)))
        if key in _RESERVED:
            raise UsageError("--runner-option %s: use --%s" % (key, key.replace("_", "-")))
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def check_min_confidence(value: Any) -> Optional[float]:
    """S6.11: a finite, non-boolean real in [0, 1]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise UsageError("min_confidence must be a float in [0.0, 1.0], got %r" % (value,))
    return float(value)


def check_options(opts: RunOptions) -> None:
    if opts.on_error not in ("fail", "skip"):
        raise UsageError("--on-error must be 'fail' or 'skip', got %s" % shorten(repr(opts.on_error)))
    check_min_confidence(opts.min_confidence)
    if opts.crash_exit_code is not None and (isinstance(opts.crash_exit_code, bool)
                                             or opts.crash_exit_code in (0, 1, 2)
                                             or not 0 <= opts.crash_exit_code <= 255):
        raise UsageError("--crash-exit-code must be an exit status in 3..255 (0, 1 and 2 have their own "
                         "meanings), got %r" % (opts.crash_exit_code,))
    if opts.run_id is not None:
        validate_run_id(opts.run_id)
    if opts.limit is not None and (isinstance(opts.limit, bool) or not isinstance(opts.limit, int) or opts.limit < 1):
        raise UsageError("--limit must be a positive number of rows, got %r" % (opts.limit,))
    RS.check_commit_options(opts)
