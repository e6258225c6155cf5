"""Test doubles for the runner protocol (runners/base.py) and a fake clock for run.py.

Register one with `laya_cases.runners.registry.register(name, cls)` to reach it through `--model`.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs, softmax


def die_at_rename(root: str, kill_at: int) -> None:
    """In a child process: exit as `kill -9` would (status 9, nothing flushed) just before the
    kill_at-th rename, replace or tree removal under `root`, the steps of a commit (crash tests)."""
    import shutil

    root, seen = os.path.abspath(root), [0]

    def dying(real):
        def rename(src, dst, *a, **k):
            if os.path.abspath(str(dst)).startswith(root):
                seen[0] += 1
                if seen[0] == kill_at:
                    os._exit(9)
            return real(src, dst, *a, **k)
        return rename
    os.rename, os.replace = dying(os.rename), dying(os.replace)
    real_rmtree = shutil.rmtree
    shutil.rmtree = lambda path, *a, **k: dying(lambda p, _q: real_rmtree(p, *a, **k))(path, path)


class FakeClock:
    """Seconds that only move when a double says its call took time (no wall clock in tests)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance_ms(self, ms: float) -> None:
        self.now += ms / 1000.0


def choice_answer(label: str, ac: float, labels: List[str]) -> Dict[str, Any]:
    rest = (1.0 - ac) / max(1, len(labels) - 1)
    return {"type": "choice", "choice": label,
            "probabilities": {l: (ac if l == label else rest) for l in labels},
            "answer_confidence": ac}


class ExplodingRunnerDouble(Runner):
    """The T6.3 scripted runner: raises RuntimeError("runner exploded") on a state containing
    "BOOM"; answers `refund` at 0.9 when the state mentions money, otherwise `refund` at 0.6; a
    state containing "SILENT" gets no answer at all (S6.10 missing answer)."""

    name = "exploding-double"
    capabilities = Capabilities(sort_by_length=True)

    def __init__(self, model: Optional[str] = None, clock: Optional[FakeClock] = None, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="exploding-double", revision="0" * 40,
                               settings={"decision_rule": "scripted", "temperature": None})
        self.calls: List[Dict[str, Any]] = []
        self.clock = clock

    def _one(self, state: Any, questions: Dict[str, Any]) -> Dict[str, Any]:
        text = str(state)
        if "SILENT" in text:
            return {"answers": {}}
        labels = [str(l) for l in questions["intent"]["criteria"]]
        ac = 0.9 if "money" in text else 0.6
        return {"answers": {"intent": choice_answer("refund", ac, labels)}}

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        self.calls.append({"states": list(states), **kwargs})
        if self.clock is not None:
            self.clock.advance_ms(10.0 + 2.0 * len(states))
        if any("BOOM" in str(s) for s in states):
            raise RuntimeError("runner exploded")
        return [self._one(s, questions) for s in states]


class TimedRunnerDouble(ExplodingRunnerDouble):
    """Same answers; each call costs 10 ms + 2 ms per state on the injected FakeClock."""

    name = "timed-double"


class SingleModelDouble(ExplodingRunnerDouble):
    """A runner that cannot answer a row naming its own `model` and runs on cpu only."""

    name = "single-model-double"
    capabilities = Capabilities(devices=("cpu",), per_row_model=False)


class LogitsDouble(Runner):
    """Score answers with raw logits and a temperature (the presentation checks need both), the same for
    the same state; a FakeClock, when given, advances 5 ms per state."""

    name = "logits-double"
    capabilities = Capabilities()

    def __init__(self, model: Any = None, clock: Optional[FakeClock] = None, **options: Any) -> None:
        self.clock = clock
        self.info = RunnerInfo(runner=self.name, model_id="logits-double", revision="r1")

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        if self.clock is not None:
            self.clock.advance_ms(5.0 * len(states))
        out = []
        for state in states:
            z = {q: [((len(str(state)) + i * 7) % 5) / 4.0 for i in range(len(b["criteria"]))]
                 for q, b in questions.items()}
            out.append({"answers": {q: answer_from_probs(b, softmax(z[q], 0.8)) for q, b in questions.items()},
                        "facts": {q: {"logits": z[q], "temperature": 0.8} for q in questions}})
        return out

