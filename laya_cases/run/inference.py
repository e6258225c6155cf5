"""One runner over a dataset's rows: chunks of rows as the reference groups them (S6.12), one timed call
each, every answer read, gated and handed to the recorder; the run's config and settings rows."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from laya_cases.core import dataset as D
from laya_cases.core.answers import AnswerError, gate_confidence
from laya_cases.core.errors import UsageError
from laya_cases.record.recorder import RunRecorder
from laya_cases.run.load import _versions
from laya_cases.run.options import BATCH_STATES, COST_METRIC, LATENCY_METRIC, RunOptions, check_min_confidence
from laya_cases.runners.base import Runner
from laya_cases.store.schema import DECISION_SCHEMA

#: Decision columns a runner may fill through `result["facts"][qid]`; other fact keys are not stored.
FACT_COLUMNS = ("raw_text", "parsed", "relevance_score", "temperature", "temperature_bucket",
                "shortlist_status", "variant", "parent_case_id", "logits", "temperature_clamped",
                "temperature_unclamped", "slot_order", "presented_labels", "shortlist_labels",
                "shortlist_scores", "no_score", "native_score", "truncated", "state_json")


assert all(DECISION_SCHEMA.get_field_index(c) >= 0 for c in FACT_COLUMNS)


class RunnerCrash(Exception):
    """A runner call raised under `--on-error fail` (S6.7: exit 1, or --crash-exit-code N, S9.7)."""

    def __init__(self, row_index: int, exc: BaseException):
        super().__init__("runner failed on row %d: %s: %s" % (row_index, type(exc).__name__, exc))
        self.row_index, self.exc = row_index, exc
        self.run_id: Optional[str] = None        # set by execute()


def apply_gate(answers: Dict[str, Any], threshold: float) -> None:
    """S6.11 per answer: passed / abstained (+ low_confidence) / unevaluated, and the threshold used."""
    for answer in answers.values():
        if not isinstance(answer, dict):
            continue
        try:
            conf = gate_confidence(answer)
        except AnswerError:
            conf = None
        if conf is not None and conf < threshold:
            answer["low_confidence"] = True
            answer["abstention"] = "abstained"
        else:
            answer.pop("low_confidence", None)
            answer["abstention"] = "unevaluated" if conf is None else "passed"
        answer["abstention_threshold"] = float(threshold)


def answered_model(result: Any) -> Any:
    """S4.3 fallback: the routed checkpoint, else the result's top-level `model`."""
    result = result if isinstance(result, dict) else {}
    routing = result.get("routing")
    if isinstance(routing, dict) and isinstance(routing.get("model"), str) and routing["model"]:
        return routing["model"]
    return result.get("model")


def signature(question_set: Dict[str, Any]) -> str:
    """S6.12 positional form: top-level qids sorted, inner key order kept."""
    return json.dumps(dict(sorted((question_set or {}).items())), sort_keys=False, default=str)


def chunks(rows: List[D.Row], models: List[Any], batch_size: Optional[int], batching: bool,
           sigs: Optional[List[str]] = None) -> Iterator[List[int]]:
    """Row positions of each call, in dataset order (S6.12); `sigs` are the rows' signatures."""
    n = batch_size if (batching and batch_size is not None and batch_size > 1) else 1
    if n > 1 and sigs is None:
        sigs = [signature(r.questions) for r in rows]
    i = 0
    while i < len(rows):
        j = i + 1
        while n > 1 and j < len(rows) and j - i < n and \
                models[j] == models[i] and sigs[j] == sigs[i]:
            j += 1
        yield list(range(i, j))
        i = j


def _facts(result: Dict[str, Any], qid: str) -> Dict[str, Any]:
    facts = result.get("facts") if isinstance(result, dict) else None
    mine = facts.get(qid) if isinstance(facts, dict) else None
    return {k: v for k, v in mine.items() if k in FACT_COLUMNS} if isinstance(mine, dict) else {}


@dataclass
class _Calls:
    """How the rows were grouped into runner calls (S6.12), as `config.timing` reports it."""

    chunks: int = 0
    rows_grouped: int = 0
    rows_alone: int = 0
    max_chunk: int = 0

    def add(self, size: int) -> int:
        """Count one call of `size` rows; returns its call id."""
        self.chunks += 1
        if size > 1:
            self.rows_grouped += size
        else:
            self.rows_alone += 1
        self.max_chunk = max(self.max_chunk, size)
        return self.chunks - 1


class _Inference:
    """The runner calls of one run; each chunk's rows go to the recorder as the call returns."""

    def __init__(self, opts: RunOptions, runner: Runner, rows: List[D.Row], clock: Callable[[], float]):
        self.opts, self.runner, self.rows, self.clock = opts, runner, rows, clock
        self.caps, self.info = runner.capabilities, runner.info
        self.models = [opts.model if opts.model is not None else row.model for row in rows]
        batching = opts.batch_size is not None and opts.batch_size > 1 and self.caps.batching
        self.batch_form = BATCH_STATES if batching else None
        self.send_sort = bool(opts.sort_by_length and self.batch_form and self.caps.sort_by_length)
        self.mc = check_min_confidence(opts.min_confidence)
        self.calls = _Calls()
        self.errored: List[Dict[str, Any]] = []

    def run(self, recorder: RunRecorder, progress: Optional[Callable[[int], None]], skip: int = 0,
            checkpoint: Optional[Callable[[int], None]] = None) -> None:
        """Call the runner chunk by chunk; the first `skip` rows (committed before a resume) are only
        counted, so call ids and the timing block read as in an uninterrupted run."""
        done = 0
        for positions in chunks(self.rows, self.models, self.opts.batch_size, self.batch_form is not None):
            if positions[0] < skip:
                self.calls.add(len(positions))
                done += len(positions)
                continue
            self._call(recorder, positions)
            done += len(positions)
            recorder.flush()
            if checkpoint:
                checkpoint(done)
            if progress:
                progress(done)

    def _call(self, recorder: RunRecorder, positions: List[int]) -> None:
        """One runner call over a chunk (S6.12), timed; a failure is fatal or recorded (S6.7, S6.10)."""
        chunk = [self.rows[p] for p in positions]
        call_id = self.calls.add(len(chunk))
        kwargs: Dict[str, Any] = {}
        if self.send_sort and len(chunk) > 1:
            kwargs["sort_by_length"] = True
        if self.caps.per_row_model:
            kwargs["model"] = self.models[positions[0]]
        started = self.clock()
        try:
            results = self.runner.predict_batch([r.state for r in chunk], chunk[0].questions, **kwargs)
            if not isinstance(results, list) or len(results) != len(chunk):
                raise RuntimeError("runner returned %s results for %d states"
                                   % (len(results) if isinstance(results, list) else type(results).__name__,
                                      len(chunk)))
        except Exception as exc:     # noqa: BLE001 -- honoured by --on-error
            if self.opts.on_error == "fail":
                raise RunnerCrash(chunk[0].index, exc) from exc
            message = "%s: %s" % (type(exc).__name__, exc)
            call = {"call_id": call_id, "call_ms": None, "chunk_size": len(chunk), "returned": False}
            for p, row in zip(positions, chunk):
                self.errored.append({"index": row.index, "error": message})
                recorder.buffer.add_error(row, message, model=self.models[p] or None, call=call)
        else:
            elapsed_ms = (self.clock() - started) * 1000.0
            call = {"call_id": call_id, "call_ms": elapsed_ms, "chunk_size": len(chunk), "returned": True}
            for p, row, result in zip(positions, chunk, results):
                self._returned(recorder, row, self.models[p], result, call)

    def _returned(self, recorder: RunRecorder, row: D.Row, row_model: Any, result: Any,
                  call: Dict[str, Any]) -> None:
        """The decision rows of one returned row: cases, missing answers (S6.10), or an empty row."""
        result = result if isinstance(result, dict) else {}
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        if self.mc is not None:
            apply_gate(answers, self.mc)
        model = row_model or answered_model(result)       # S4.3: an empty row model counts as unset

        def missing(pos: int, qid: str) -> None:
            if self.opts.on_error == "fail":
                raise UsageError("%s runner returned no answer for question '%s'" % (recorder.where(row), qid))
            self.errored.append({"index": row.index, "question": qid, "error": "missing answer"})
            recorder.buffer.add_error(row, "missing answer", qid=qid, qid_pos=pos, model=model, call=call)

        def extra(qid: str) -> Dict[str, Any]:
            facts = _facts(result, qid)
            if self.mc is not None:
                facts["abstention_threshold"] = self.mc
            return facts

        recorder.add_answers(row, answers, model=model, call=call, field="runner answer", missing=missing,
                             extra=extra)

    def config(self, dataset_sha: str) -> Dict[str, Any]:
        """What the run measured and how it was batched (the identity keys are the recorder's)."""
        opts, calls, info = self.opts, self.calls, self.info
        config: Dict[str, Any] = {
            "dataset": opts.dataset, "model": opts.model, "device": opts.device, "dataset_sha256": dataset_sha,
            "timing": {"latency_metric": LATENCY_METRIC, "cost_metric": COST_METRIC,
                       "batch_size": opts.batch_size, "batch_form": self.batch_form,
                       "sort_by_length": bool(opts.sort_by_length), "sort_by_length_sent": self.send_sort,
                       "min_confidence": opts.min_confidence,
                       "min_confidence_sent": self.mc is not None and calls.chunks > 0,
                       "chunks": calls.chunks, "rows_grouped": calls.rows_grouped,
                       "rows_alone": calls.rows_alone, "max_chunk": calls.max_chunk},
            "revisions": {info.model_id: info.revision},
        }
        if "onnx" in opts.runner_options:        # the reference's key for the same choice; other runner
            config["onnx"] = opts.runner_options["onnx"]   # options live in extensions.run (S0.2)
        if self.errored:
            config["errored"] = self.errored
        return config

    def settings(self) -> Dict[str, Any]:
        opts, info = self.opts, self.info
        settings = dict(info.settings)
        settings.update({
            "runner": info.runner, "model_id": info.model_id, "model_revision": info.revision,
            "device": info.device, "dtype": info.dtype, "max_length": info.max_length,
            "batch_size": opts.batch_size, "sort_by_length": bool(opts.sort_by_length),
            "min_confidence": opts.min_confidence, "on_error": opts.on_error,
            "crash_exit_code": opts.crash_exit_code, "runner_options": dict(opts.runner_options),
            "runner_requested": opts.runner, "versions": _versions(),
        })
        return settings

    def run_row(self, dataset_sha: str, extend_config: Optional[Callable[[Dict[str, Any]], None]] = None
                ) -> Dict[str, Any]:
        """The runs entry as the run stands: written with every chunk and at the end (run, shards)."""
        info, config = self.info, self.config(dataset_sha)
        if extend_config is not None:
            extend_config(config)
        return dict(kind="run", dataset=self.opts.dataset, dataset_sha256=dataset_sha, runner=info.runner,
                    model_id=info.model_id, model_revision=info.revision, config=config,
                    settings=self.settings())

    def checkpoint(self, recorder: RunRecorder, key: Dict[str, Any], dataset_sha: str,
                   extend_config: Optional[Callable[[Dict[str, Any]], None]] = None) -> Callable[[int], None]:
        """The per-row hook that commits a chunk when one is due."""
        def due(done: int) -> None:
            if recorder.chunk_due(done):
                recorder.commit_chunk(done, key, **self.run_row(dataset_sha, extend_config))
        return due
