"""One run's work as the run loop (execute.py) drives it: the rows, the runner calls, what each returned
result records, and the run's config and settings (S6.7-S6.13).

`Job` is `laya-cases run` over a JSONL dataset. A benchmark is a subclass that overrides the hooks it
needs, as dbt's SeedTask overrides RunTask's: massive reads sampled rows and stores each state,
robustness asks every case in three presentations, presentation refuses answers without raw logits,
shortlist narrows the options first. Checks, staging, chunk commits, resume and shards stay in the loop,
so every benchmark commits and resumes the way `run` does.

Rows are grouped into calls exactly as the reference harness groups them (S6.12): consecutive rows, at
most N, with the same effective model and the same question signature. Each call is timed with `clock`;
every row of a call carries the call's id, wall time and size (sql/metrics/timing.sql, S3.15). Under
`--on-error fail` a runner exception aborts the run (RunnerCrash); under `skip` every row of the failed
call becomes an error record and an `errored` entry (S6.10). `--min-confidence` writes the S6.11 gate
state onto each answer and never changes the answer itself.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from laya_cases.core import dataset as D, identity as I, strict
from laya_cases.core.errors import UsageError
from laya_cases.record.decisions import DecisionBuffer
from laya_cases.record.recorder import RunRecorder
from laya_cases.run.inference import Calls, RunnerCrash, answered_model, apply_gate, chunks, facts_of
from laya_cases.run.load import load_runner, versions
from laya_cases.run.options import BATCH_STATES, COST_METRIC, LATENCY_METRIC, RunOptions, check_min_confidence, \
    check_options
from laya_cases.runners.base import Runner


@dataclass
class Call:
    """One runner call: the states of `rows` asked `questions`. `items` are the job's handles on them
    (dataset positions; robustness: its cases), `done` the job's units finished once it returns."""

    items: List[Any]
    rows: List[D.Row]
    questions: Dict[str, Any]
    done: int


class Job:
    """`laya-cases run DATASET`: every row once, in calls of up to --batch-size rows."""

    kind = "run"                     # the runs row's kind

    def __init__(self, opts: RunOptions):
        self.opts = opts
        self.calls: Any = Calls()    # a shard's counts its call ids from its first row (shard.py)
        self.errored: List[Dict[str, Any]] = []
        self.dataset_sha = ""

    # -- before any model loads -------------------------------------------------------------------
    def check(self) -> None:
        """Refuse bad options (exit 2) before anything is read."""
        check_options(self.opts)

    @property
    def source(self) -> str:
        """The file every error names as `<file>:<line>`."""
        return self.opts.dataset

    def read(self) -> List[D.Row]:
        """Every row of the run (its identity covers them all), checked; sets `dataset_sha`."""
        rows = D.load(self.opts.dataset)[:self.opts.limit]          # limit None: every row
        self.check_rows(rows)
        self.dataset_sha = I.file_sha256(self.opts.dataset)
        return rows

    def check_rows(self, rows: List[D.Row]) -> None:
        """What `validate --strict` rejects never reaches a model."""
        strict.refuse_errors(self.opts.dataset, rows)

    def identity(self) -> Dict[str, Any]:
        """What else a resumed run must share with its first part (a benchmark's parameters)."""
        return {}

    def new_buffer(self) -> Optional[DecisionBuffer]:
        """The decision buffer, when the job records more than the plain rows (None: the default)."""
        return None

    # -- the model ------------------------------------------------------------------------------
    def load(self, rows: List[D.Row], every: List[D.Row], runner: Optional[Runner],
             clock: Callable[[], float]) -> None:
        """Load the runner, refused by its capabilities over `every` row first, to answer `rows` (a
        shard's share, else every row); `runner` replaces the --model resolution."""
        self.runner = load_runner(self.opts, every, runner)
        self.rows, self.clock = rows, clock
        self.caps, self.info = self.runner.capabilities, self.runner.info
        self.models = [self.opts.model if self.opts.model is not None else row.model for row in rows]
        batching = self.opts.batch_size is not None and self.opts.batch_size > 1 and self.caps.batching
        self.batch_form = BATCH_STATES if batching else None
        self.send_sort = bool(self.opts.sort_by_length and self.batch_form and self.caps.sort_by_length)
        self.mc = check_min_confidence(self.opts.min_confidence)

    def units(self) -> int:
        """How many units `Call.done` counts to (the progress bar's total)."""
        return len(self.rows)

    def restore(self, entry: Optional[Dict[str, Any]], recorder: RunRecorder) -> int:
        """Continue a resumed run from its progress entry (None: a new run); returns the units done."""
        if entry is None:
            return 0
        config = self.committed_config(entry)
        self.errored = list(config.get("errored") or [])
        self.calls.restore(config.get("timing") or {})
        return entry["rows_committed"]

    @staticmethod
    def committed_config(entry: Dict[str, Any]) -> Dict[str, Any]:
        try:
            config = json.loads(entry["run"].get("config_json") or "{}")
        except ValueError:
            config = {}
        return config if isinstance(config, dict) else {}

    # -- the calls ------------------------------------------------------------------------------
    def plan(self) -> Iterator[Call]:
        """The calls in order (S6.12 chunks of consecutive rows)."""
        for positions in chunks(self.rows, self.models, self.opts.batch_size, self.batch_form is not None):
            yield Call(positions, [self.rows[p] for p in positions], self.rows[positions[0]].questions,
                       positions[-1] + 1)

    def run(self, recorder: RunRecorder, progress: Optional[Callable[[int], None]], skip: int,
            checkpoint: Callable[[int], None]) -> None:
        """Make every call not committed before (`done` beyond `skip`); rows go to the recorder as each
        call returns, and a chunk commit may follow any call."""
        for call in self.plan():
            if call.done <= skip:
                continue
            if call.rows:
                self.ask(recorder, call)
            recorder.flush()
            checkpoint(call.done)
            if progress:
                progress(call.done)

    def kwargs(self, call: Call) -> Dict[str, Any]:
        kwargs: Dict[str, Any] = {}
        if self.send_sort and len(call.rows) > 1:
            kwargs["sort_by_length"] = True
        if self.caps.per_row_model:
            kwargs["model"] = self.models[call.items[0]]
        return kwargs

    def ask(self, recorder: RunRecorder, call: Call) -> None:
        """One runner call (S6.12), timed; a failure goes to `failed`, each result to `returned`."""
        call_id = self.calls.add(len(call.rows))
        started = self.clock()
        try:
            results = self.runner.predict_batch([r.state for r in call.rows], call.questions, **self.kwargs(call))
            if not isinstance(results, list) or len(results) != len(call.rows):
                raise RuntimeError("runner returned %s results for %d states"
                                   % (len(results) if isinstance(results, list) else type(results).__name__,
                                      len(call.rows)))
        except Exception as exc:     # noqa: BLE001 -- honoured by --on-error (or the job's own rule)
            self.failed(recorder, call, exc, {"call_id": call_id, "call_ms": None, "chunk_size": len(call.rows),
                                              "returned": False})
            return
        made = {"call_id": call_id, "call_ms": (self.clock() - started) * 1000.0, "chunk_size": len(call.rows),
                "returned": True}
        for item, row, result in zip(call.items, call.rows, results):
            self.returned(recorder, item, row, result if isinstance(result, dict) else {}, made)

    def failed(self, recorder: RunRecorder, call: Call, exc: Exception, made: Dict[str, Any]) -> None:
        """A call that raised: fatal under --on-error fail (S6.7), error records under skip (S6.10)."""
        if self.opts.on_error == "fail":
            raise RunnerCrash(call.rows[0].index, exc) from exc
        message = "%s: %s" % (type(exc).__name__, exc)
        for p, row in zip(call.items, call.rows):
            self.errored.append({"index": row.index, "error": message})
            recorder.buffer.add_error(row, message, model=self.models[p] or None, call=made)

    def returned(self, recorder: RunRecorder, item: Any, row: D.Row, result: Dict[str, Any],
                 made: Dict[str, Any]) -> None:
        """The decision rows of one returned row: cases, missing answers (S6.10), or an empty row."""
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        if self.mc is not None:
            apply_gate(answers, self.mc)
        model = self.models[item] or answered_model(result, self.info.model_id)   # S4.3: an empty row model is unset

        def missing(pos: int, qid: str) -> None:
            if self.opts.on_error == "fail":
                raise UsageError("%s runner returned no answer for question '%s'" % (recorder.where(row), qid))
            self.errored.append({"index": row.index, "question": qid, "error": "missing answer"})
            recorder.buffer.add_error(row, "missing answer", qid=qid, qid_pos=pos, model=model, call=made)

        def extra(qid: str) -> Dict[str, Any]:
            facts = self.facts(row, result, qid)
            if self.mc is not None:
                facts["abstention_threshold"] = self.mc
            return facts

        recorder.add_answers(row, answers, model=model, call=made, field="runner answer", missing=missing,
                             extra=extra)

    def facts(self, row: D.Row, result: Dict[str, Any], qid: str) -> Dict[str, Any]:
        """The decision columns the runner filled for `qid` (`result["facts"][qid]`)."""
        return facts_of(result, qid)

    # -- the runs row ---------------------------------------------------------------------------
    def config(self) -> Dict[str, Any]:
        """What the run measured and how it was batched (the identity keys are the recorder's)."""
        opts, calls, info = self.opts, self.calls, self.info
        config: Dict[str, Any] = {
            "dataset": opts.dataset, "model": opts.model, "device": opts.device, "dataset_sha256": self.dataset_sha,
            "timing": {"latency_metric": LATENCY_METRIC, "cost_metric": COST_METRIC,
                       "batch_size": opts.batch_size, "batch_form": self.batch_form,
                       "sort_by_length": bool(opts.sort_by_length), "sort_by_length_sent": self.send_sort,
                       "min_confidence": opts.min_confidence,
                       "min_confidence_sent": self.mc is not None and calls.chunks > 0,
                       "chunks": calls.chunks, "rows_grouped": calls.rows_grouped,
                       "rows_alone": calls.rows_alone, "max_chunk": calls.max_chunk},
            "revisions": {info.model_id: info.revision},
        }
        if info.settings.get("laya_version") is not None:   # the reference's key, where Laya answered (S5.5)
            config["laya_version"] = info.settings["laya_version"]
        if "onnx" in opts.runner_options:        # the reference's key for the same choice; other runner
            config["onnx"] = opts.runner_options["onnx"]   # options live in extensions.run (S0.2)
        if self.errored:
            config["errored"] = self.errored
        return config

    def settings(self) -> Dict[str, Any]:
        """The one settings row of every run (what gates compare for comparability)."""
        opts, info = self.opts, self.info
        settings = dict(info.settings)
        settings.update({
            "runner": info.runner, "model_id": info.model_id, "model_revision": info.revision,
            "device": info.device, "dtype": info.dtype, "max_length": info.max_length,
            "batch_size": opts.batch_size, "sort_by_length": bool(opts.sort_by_length),
            "min_confidence": opts.min_confidence, "on_error": opts.on_error,
            "crash_exit_code": opts.crash_exit_code, "runner_options": dict(opts.runner_options),
            "runner_requested": opts.runner, "versions": versions(),
        })
        return settings

    def run_row(self) -> Dict[str, Any]:
        """The runs entry as the run stands: written with every chunk commit and at the end."""
        info = self.info
        return dict(kind=self.kind, dataset=self.opts.dataset, dataset_sha256=self.dataset_sha, runner=info.runner,
                    model_id=info.model_id, model_revision=info.revision, config=self.config(),
                    settings=self.settings())
