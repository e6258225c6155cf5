"""Inference that writes decisions: dataset -> runner -> decision rows -> a committed run (S6.7-S6.13).

Rows are grouped into chunks exactly as the reference harness groups them (S6.12): consecutive
rows, at most N, with the same effective model and the same question signature (top-level qids
sorted, inner key order significant: our runners take one positional `questions` per call). Each
chunk is one runner call, timed with `clock`; every row of a chunk carries the call's id, wall
time and size, from which sql/metrics/timing.sql derives latency and cost per decision (S3.15).

Under `--on-error fail` a runner exception aborts the run and nothing is committed (the staging
area is discarded); under `skip` every row of the failed chunk becomes an error record and an
`errored` entry (S6.10). `--min-confidence` writes the S6.11 gate state onto each answer
(`abstention`, `abstention_threshold`, `low_confidence`) and never changes the answer itself.

Decisions are committed in chunks as the run goes (after the runner call that completes every
--commit-every dataset rows or --commit-seconds; record.COMMIT_ROWS, record.COMMIT_SECONDS): a run
that dies midway stays as an incomplete run, and `--resume ID` continues it (resume.py).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import dataset as D
from laya_cases.core import identity as I
from laya_cases.core import strict
from laya_cases.core.answers import AnswerError, gate_confidence
from laya_cases.run import resume as RS
from laya_cases.record.recorder import COMMIT_ROWS, COMMIT_SECONDS, RecordedRun, RunRecorder
from laya_cases.run.load import _load_runner, _preflight, _versions  # noqa: F401  (harnesses call R._load_runner)
from laya_cases.runners.base import Runner
from laya_cases.store.schema import DECISION_SCHEMA
from laya_cases.store.warehouse import Warehouse, new_run_id, validate_run_id

#: Copied from the reference (laya/evals.py, `evaluate`): what the two timing metrics mean.
LATENCY_METRIC = "per request: the wall time of the call that returned it, unsplit"
COST_METRIC = "per decision: that call divided by its own chunk size"
BATCH_STATES = "states"
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


def execute(wh: Warehouse, opts: RunOptions, *, runner: Optional[Runner] = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None,
            extend_config: Optional[Callable[[Dict[str, Any]], None]] = None) -> RecordedRun:
    """Run the model over the dataset and commit the run; returns its id and counts.

    `runner` replaces the --model resolution (tests, benchmarks); `clock` returns seconds and times
    each call; `on_loaded(total_rows)` is called once the dataset and model are ready;
    `extend_config(config)` may add a harness's block to the report config just before each commit.

    Chunks: `opts.commit_every` dataset rows / `opts.commit_seconds` (None: record.COMMIT_ROWS and
    COMMIT_SECONDS; 0: off). A run that dies after a chunk is incomplete (`wh.run_state(id)`), and
    `execute(wh, RunOptions(..., run_id=id, resume=True))` finishes it, calling the runner only for
    the rows not committed; a different dataset, model or option is a UsageError naming it.
    """
    if opts.shard is not None:        # one shard of a run on N hosts or processes (shard.py)
        from laya_cases.run import shard
        return shard.execute(wh, opts, runner=runner, clock=clock, progress=progress, on_loaded=on_loaded,
                             extend_config=extend_config)
    check_options(opts)
    run_id = opts.run_id or new_run_id()
    RS.check_state(wh, run_id, opts.resume)
    rows = D.load(opts.dataset)[:opts.limit]          # limit None: every row
    strict.refuse_errors(opts.dataset, rows)          # what `validate --strict` rejects never reaches a model
    recorder = RunRecorder(wh, run_id, opts.dataset,
                           commit_rows=COMMIT_ROWS if opts.commit_every is None else opts.commit_every,
                           commit_seconds=COMMIT_SECONDS if opts.commit_seconds is None else opts.commit_seconds)
    for row in rows:                  # the whole identity first: a bad row fails before the model loads
        recorder.note_row(row)
    dataset_sha = I.file_sha256(opts.dataset)
    key = RS.identity(opts, recorder, dataset_sha)
    if opts.resume:                   # the same run, checked before the model loads (and after)
        opts = RS.before_load(wh, run_id, opts, key)
    inference = _Inference(opts, _load_runner(opts, rows, runner), rows, clock)
    key["settings"] = RS.plain(inference.settings())
    if opts.resume:
        RS.after_load(wh, run_id, key)
    if on_loaded:
        on_loaded(len(rows))

    checkpoint = inference.checkpoint(recorder, key, dataset_sha, extend_config)
    try:
        with recorder.staging(resume=opts.resume):
            inference.run(recorder, progress, RS.restore(recorder.resumed, inference), checkpoint)
            return recorder.commit(**inference.run_row(dataset_sha, extend_config))
    except RunnerCrash as crash:
        crash.run_id = run_id         # committed chunks stay as an incomplete run (`--resume` continues it)
        raise
