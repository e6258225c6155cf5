"""Loading the runner of a run (run/job.py): capability checks before any model loads, and the library
versions a run records."""
from __future__ import annotations

import functools
import platform
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import dataset as D
from laya_cases.core import questions
from laya_cases.runners import registry
from laya_cases.runners.base import Runner

_VERSIONED = ("laya-cases", "torch", "transformers", "duckdb", "pyarrow", "numpy", "polars")


@functools.lru_cache(maxsize=1)
def _cached_versions() -> Tuple[Tuple[str, Optional[str]], ...]:
    from importlib.metadata import PackageNotFoundError, version

    out: Dict[str, Optional[str]] = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return tuple(out.items())


def versions() -> Dict[str, Optional[str]]:
    """The library versions a run records; looked up once per process (every chunk commit records them)."""
    return dict(_cached_versions())


def preflight(cls_or_runner: Any, opts: Any, rows: List[D.Row]) -> None:
    """Refuse, before any model loads, what the runner's capabilities say it cannot do (exit 2)."""
    caps = cls_or_runner.capabilities
    name = getattr(cls_or_runner, "name", "") or "runner"
    if opts.device is not None and opts.device not in caps.devices:
        raise UsageError("--device %s: the %s runner runs on %s" % (opts.device, name, ", ".join(caps.devices)))
    if opts.min_confidence is not None and not caps.min_confidence:
        raise UsageError("--min-confidence: the %s runner's answers carry no confidence the gate can read"
                         % name)
    if opts.model is None and not caps.per_row_model:
        for row in rows:
            if row.model is not None and row.model != "":
                raise UsageError("%s:%d names model %s, but the %s runner answers with one model only; "
                                 "pass --model or drop the row's `model`"
                                 % (opts.dataset, row.line_no, shorten(repr(row.model)), name))
    for row in rows:
        for qid, body in row.questions.items():
            kind = body.get("type") if isinstance(body, dict) else None
            if kind in questions.TYPES and kind not in caps.question_types:
                raise UsageError("%s:%d question '%s' is a %s question; the %s runner answers %s only"
                                 % (opts.dataset, row.line_no, qid, kind, name, ", ".join(caps.question_types)))


def load_runner(opts: Any, rows: List[D.Row], runner: Optional[Runner]) -> Runner:
    """The runner --model/--runner name, refused by its capabilities before any model loads."""
    if runner is not None:
        preflight(runner, opts, rows)
        return runner
    _name, cls, _arg = registry.resolve(opts.model, opts.runner)
    preflight(cls, opts, rows)
    return registry.load(opts.model, opts.runner, device=opts.device, revision=opts.revision,
                         batch_size=opts.batch_size, **opts.runner_options)
