"""Run a model over the presentation inputs and commit its decisions, raw logits included (S7.9-S7.12).

One runner call per state (12 score questions). Every answer must come with the runner's raw
logits (`facts[qid]["logits"]`, one per level, before temperature) and the temperature it applied
(`facts[qid]["temperature"]`): without them the checks cannot be computed, so the run is refused
(UsageError, exit 2, the staging area discarded, the store unchanged). The committed run is an
ordinary run (kind `run`, schema laya-presentation-checks/1) whose `dataset` is the states file, made by
the run loop of `laya-cases run` (PresentationJob): chunk commits and `resume` as for any run.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable, Dict, List, Optional

from laya_cases.core import dataset as D, identity as I
from laya_cases.core.errors import UsageError, shorten
from laya_cases.record.recorder import RecordedRun
from laya_cases.run.execute import execute as run_execute
from laya_cases.run.job import Job
from laya_cases.run.options import RunOptions
from laya_cases.runners import registry
from laya_cases.runners.base import Runner
from laya_cases.store.warehouse import Warehouse
from laya_cases.harness.presentation.constants import PARITY_TOLERANCE, SCHEMA, THRESHOLDS
from laya_cases.harness.presentation import inputs


def checked_facts(runner: Runner, facts: Dict[str, Any], qid: str, k: int) -> Dict[str, Any]:
    """The answer's stored facts; refuses a decision without raw logits or a temperature."""
    logits, t = facts.get("logits"), facts.get("temperature")
    name = getattr(runner, "name", "") or runner.info.runner
    if not isinstance(logits, (list, tuple)) or len(logits) != k:
        raise UsageError("the %s runner exposes no raw logits (facts['%s']['logits'] with one value per option); "
                         "the presentation checks need them" % (name, shorten(qid)))
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise UsageError("the %s runner exposes no temperature (facts['%s']['temperature']); the presentation "
                         "checks need it to compare its probabilities" % (name, shorten(qid)))
    return facts


class PresentationJob(Job):
    """The presentation checks on the run loop: one call per state (12 score questions), every answer
    with its raw logits and temperature, the states file as the dataset."""

    def __init__(self, opts: RunOptions, states: Optional[str]):
        super().__init__(opts)
        self.states = states

    def read(self) -> List[D.Row]:
        path, rows = inputs.load(self.states)
        self.opts = dataclasses.replace(self.opts, dataset=path)
        self.dataset_sha = I.file_sha256(path)
        return rows

    def load(self, rows: List[D.Row], every: List[D.Row], runner: Optional[Runner],
             clock: Callable[[], float]) -> None:
        if runner is None:
            name, cls, _arg = registry.resolve(self.opts.model)
            if "score" not in cls.capabilities.question_types:
                raise UsageError("the %s runner answers no score questions; the presentation checks ask them" % name)
        super().load(rows, every, runner, clock)

    def facts(self, row: D.Row, result: Dict[str, Any], qid: str) -> Dict[str, Any]:
        return checked_facts(self.runner, super().facts(row, result, qid), qid, len(row.questions[qid]["criteria"]))

    def config(self) -> Dict[str, Any]:
        return dict(super().config(), schema=SCHEMA, presentation={
            "thresholds": dict(THRESHOLDS), "parity_tolerance": PARITY_TOLERANCE, "states": len(self.rows),
            "decisions_per_state": len(self.rows[0].questions)})


def execute(wh: Warehouse, *, model: Optional[str] = None, run_id: Optional[str] = None,
            device: Optional[str] = None, states: Optional[str] = None, runner: Optional[Runner] = None,
            clock: Callable[[], float] = time.perf_counter, resume: bool = False,
            commit_every: Optional[int] = None) -> RecordedRun:
    """Answer the fixed inputs with `runner` (else --model by name) and commit the run."""
    opts = RunOptions(dataset="", model=model, run_id=run_id, device=device, resume=resume, commit_every=commit_every)
    return run_execute(wh, PresentationJob(opts, states), runner=runner, clock=clock)
