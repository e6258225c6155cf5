"""Finding a runner by `--model`: registered names first, then each runner's own `accepts` rule.

Runners register through the entry-point group `laya_cases.runners` (pyproject.toml), the seam a
third-party package uses too. `register()` adds a class in-process (tests, notebooks); it wins over
an entry point of the same name. Resolution never loads a model: an unknown `--model` is a usage
error before anything heavy is imported.
"""
from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, Dict, List, Optional, Tuple, Type

from laya_cases.core.errors import UsageError
from laya_cases.runners.base import Runner

GROUP = "laya_cases.runners"
DEFAULT_MODEL = "minilm"

_registered: Dict[str, Type[Runner]] = {}
_loaded: Dict[str, Type[Runner]] = {}


def _entry_points() -> Dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def names() -> List[str]:
    """Every runner name a `--model` may give, sorted."""
    return sorted(set(_entry_points()) | set(_registered))


def register(name: str, cls: Type[Runner]) -> None:
    """Make `cls` available as `--model <name>` in this process."""
    _registered[name] = cls


def unregister(name: str) -> None:
    _registered.pop(name, None)


#: Runner names that were split or renamed: asked for, they say what to use instead.
RENAMED = {"onnx": "runner 'onnx' is now two: 'minilm-onnx' (a MiniLM embedder export) and 'laya-onnx' (a Laya "
                   "checkpoint export, scored through laya's ONNXAgent); `--onnx PATH` picks the one the graph is"}


def get_class(name: str) -> Type[Runner]:
    if name in _registered:
        return _registered[name]
    if name not in _loaded:
        ep = _entry_points().get(name)
        if ep is None:
            raise UsageError(RENAMED.get(name) or unknown_model(name))
        try:
            _loaded[name] = ep.load()
        except Exception as exc:        # a broken plugin is the user's environment: one line, exit 2
            raise UsageError("runner %r cannot be imported (%s): %s: %s"
                             % (name, ep.value, type(exc).__name__, exc)) from None
    return _loaded[name]


def resolve(model: Optional[str], runner: Optional[str] = None,
            **opts: Any) -> Tuple[str, Type[Runner], Optional[str]]:
    """`--model` (and `--runner`) -> (runner name, runner class, model argument for the class or None).

    `--runner NAME` picks the runner outright and hands it `--model` as is (None: its default), for a
    model two runners could read (SmolLM2 by next-token P(yes) or by generation, say).
    A registered name selects its runner with the runner's own default model. Anything else is
    offered to each runner's `accepts` in name order (a checkpoint directory, a hub id); the first
    that accepts it gets it as its `model` argument. `opts` are the load options, unused here but
    part of the hook so a rule may depend on them later.
    """
    if runner is not None:
        return runner, get_class(runner), model
    model = DEFAULT_MODEL if model is None else model
    if model in names():
        return model, get_class(model), None
    for name in names():
        try:
            cls = get_class(name)
        except UsageError:
            continue                    # a broken plugin cannot claim someone else's model
        try:
            if cls.accepts(model):
                return name, cls, model
        except Exception:               # an accepts rule that crashes claims nothing
            continue
    raise UsageError(unknown_model(model))


#: What users pass to --model, in the words of the README (the runner names follow in the message).
MODEL_CHOICES = ("minilm (the default)", "use-multilingual", "smollm2", "a Laya checkpoint directory or hub id",
                 "a model directory or hub id with --runner NAME", "--onnx FILE")


def unknown_model(model: Any) -> str:
    return ("unknown model %r; choose one of %s (runners: %s)"
            % (model, ", ".join(MODEL_CHOICES), ", ".join(names())))


def load(model: Optional[str], runner: Optional[str] = None, **opts: Any) -> Runner:
    """Resolve and construct; only options that were given (not None) are passed on."""
    name, cls, model_arg = resolve(model, runner, **opts)
    kwargs = {k: v for k, v in opts.items() if v is not None}
    if model_arg is not None:
        kwargs["model"] = model_arg
    try:
        runner = cls(**kwargs)
    except UsageError:
        raise
    except Exception as exc:            # cannot be loaded: exit 2 before any row (S6.7)
        raise UsageError("model %r cannot be loaded by runner %r: %s: %s"
                         % (model or DEFAULT_MODEL, name, type(exc).__name__, exc)) from None
    if not getattr(runner, "name", ""):
        runner.name = name
    return runner
