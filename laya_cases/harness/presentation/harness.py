"""Run a model over the presentation inputs and commit its decisions, raw logits included (S7.9-S7.12).

One runner call per state (12 score questions). Every answer must come with the runner's raw
logits (`facts[qid]["logits"]`, one per level, before temperature) and the temperature it applied
(`facts[qid]["temperature"]`): without them the checks cannot be computed, so the run is refused
(UsageError, exit 2, the staging area discarded, the store unchanged). The committed run is an
ordinary run (kind `run`, schema laya-presentation-checks/1) whose `dataset` is the states file.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import identity as I
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.run.inference import FACT_COLUMNS, RunnerCrash
from laya_cases.run.options import check_options, RunOptions
from laya_cases.runners import registry
from laya_cases.runners.base import Runner
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import new_run_id
from laya_cases.harness.presentation.constants import PARITY_TOLERANCE, SCHEMA, THRESHOLDS
from laya_cases.harness.presentation import inputs


def _facts(runner: Runner, result: Dict[str, Any], qid: str, k: int) -> Dict[str, Any]:
    """The answer's stored facts; refuses a decision without raw logits or a temperature."""
    facts = result.get("facts") if isinstance(result.get("facts"), dict) else {}
    mine = facts.get(qid) if isinstance(facts.get(qid), dict) else {}
    logits, t = mine.get("logits"), mine.get("temperature")
    name = getattr(runner, "name", "") or runner.info.runner
    if not isinstance(logits, (list, tuple)) or len(logits) != k:
        raise UsageError("the %s runner exposes no raw logits (facts['%s']['logits'] with one value per option); "
                         "the presentation checks need them" % (name, shorten(qid)))
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise UsageError("the %s runner exposes no temperature (facts['%s']['temperature']); the presentation "
                         "checks need it to compare its probabilities" % (name, shorten(qid)))
    return {key: value for key, value in mine.items() if key in FACT_COLUMNS}


def execute(wh: Warehouse, *, model: Optional[str] = None, run_id: Optional[str] = None,
            device: Optional[str] = None, states: Optional[str] = None, runner: Optional[Runner] = None,
            clock: Callable[[], float] = time.perf_counter) -> RecordedRun:
    """Answer the fixed inputs with `runner` (else --model by name) and commit the run."""
    check_options(RunOptions(dataset="", run_id=run_id))
    rid = run_id or new_run_id()
    if wh.has_run(rid):
        raise UsageError("run id %s already exists in warehouse %s" % (shorten(repr(rid)), wh.root))
    path, rows = inputs.load(states)
    if runner is None:
        _name, cls, _arg = registry.resolve(model)
        if "score" not in cls.capabilities.question_types:
            raise UsageError("the %s runner answers no score questions; the presentation checks ask them" % _name)
        runner = registry.load(model, device=device)
    info = runner.info
    recorder = RunRecorder(wh, rid, path)
    for row in rows:
        recorder.note_row(row)
    with recorder.staging():
        for row in rows:
            started = clock()
            try:
                result = runner.predict_batch([row.state], row.questions)[0]
            except Exception as exc:     # noqa: BLE001 -- a crash is exit 1 with the row, as `run` does
                raise RunnerCrash(row.index, exc) from exc
            call = {"call_id": row.index, "call_ms": (clock() - started) * 1000.0, "chunk_size": 1, "returned": True}
            result = result if isinstance(result, dict) else {}
            answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
            facts = {qid: _facts(runner, result, qid, len(body["criteria"])) for qid, body in row.questions.items()}

            def missing(pos: int, qid: str) -> None:
                raise UsageError("%s runner returned no answer for question '%s'" % (recorder.where(row), qid))

            recorder.add_answers(row, answers, model=model, call=call, field="runner answer", missing=missing,
                                 extra=facts.get)
        config = {"schema": SCHEMA, "dataset": path, "dataset_sha256": I.file_sha256(path), "model": model,
                  "presentation": {"thresholds": dict(THRESHOLDS), "parity_tolerance": PARITY_TOLERANCE,
                                   "states": len(rows), "decisions_per_state": len(rows[0].questions)},
                  "revisions": {info.model_id: info.revision}}
        settings = dict(info.settings, runner=info.runner, model_id=info.model_id, model_revision=info.revision,
                        device=info.device, dtype=info.dtype, max_length=info.max_length)
        return recorder.commit(kind="run", dataset=path, dataset_sha256=config["dataset_sha256"],
                               runner=info.runner, model_id=info.model_id, model_revision=info.revision,
                               config=config, settings=settings)
