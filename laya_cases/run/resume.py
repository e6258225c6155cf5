"""Resuming an interrupted `laya-cases run` (`--resume RUN_ID`; `RunOptions(run_id=..., resume=True)`).

A run commits its decisions in chunks as it goes (record/recorder.py, store/progress.py). When it is killed,
crashes or stops on a runner error, the committed chunks stay as an incomplete run, and resuming
it calls the runner only for the dataset rows whose calls were not committed; the final run holds
the very decision rows an uninterrupted run would (same case ids, slice-set ids, call ids and chunk
sizes), only `call_ms` of the calls made after the interruption comes from the second process.

Resuming requires the same run: the dataset's bytes, labelled rows and questions, and every option
that can change a decision (model, runner, batch size, sort-by-length, min-confidence, on-error,
device, revision, runner options), then, once the model is loaded, the runner's recorded settings
(model id and revision, dtype, library versions). The first difference is a usage error naming it.
The dataset may have moved: the run keeps the path it was started with.
"""
from __future__ import annotations

import dataclasses
import json
import math
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core.identity import first_difference
from laya_cases.record.recorder import COMMIT_ROWS, COMMIT_SECONDS, RunRecorder
from laya_cases.store import progress as run_progress
from laya_cases.store.layout import new_run_id, taken


def check_commit_options(opts: Any) -> None:
    """--commit-every: an integer >= 0 (dataset rows); --commit-seconds: a finite number >= 0; 0 turns
    either off. --resume needs the run id."""
    every, seconds = opts.commit_every, opts.commit_seconds
    if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 0):
        raise UsageError("--commit-every must be an integer >= 0 (dataset rows; 0: only at the end), got %s"
                         % shorten(repr(every)))
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not math.isfinite(seconds) or seconds < 0):
        raise UsageError("--commit-seconds must be a number >= 0 (0: never by time), got %s" % shorten(repr(seconds)))
    if opts.resume and not opts.run_id:
        raise UsageError("--resume needs the id of the run to continue")


def check_state(wh, run_id: str, resume: bool) -> None:
    """Before anything loads: a new run's id is free; a resumed run's id names an incomplete run."""
    state = wh.run_state(run_id)
    if state == "incomplete" and isinstance((run_progress.read_quiet(wh, run_id) or {}).get("shards"), dict):
        raise UsageError("run id %s is a sharded run in progress in warehouse %s: run a missing shard with "
                         "--shard I/N --run-id %s" % (shorten(repr(run_id)), wh.root, run_id))
    if state == "complete":
        raise taken(run_id, wh.root, " and is complete: nothing to resume" if resume else "")
    if resume and state is None:
        raise UsageError("cannot resume run %s: no incomplete run with that id in warehouse %s"
                         % (shorten(repr(run_id)), wh.root))
    if not resume and state == "incomplete":
        raise taken(run_id, wh.root, " as an incomplete run; add --resume %s to continue it" % run_id)


def identity(opts: Any, recorder: Any, dataset_sha256: str) -> Dict[str, Any]:
    """What a resumed run must share with its first part (the loaded runner's settings come later)."""
    return plain(dict(recorder.identity(), dataset_sha256=dataset_sha256, n_rows=recorder.n_rows, options={
        "model": opts.model, "runner": opts.runner, "batch_size": opts.batch_size,
        "sort_by_length": bool(opts.sort_by_length), "min_confidence": opts.min_confidence,
        "on_error": opts.on_error, "device": opts.device, "revision": opts.revision,
        "runner_options": dict(opts.runner_options), "crash_exit_code": opts.crash_exit_code}))


def plain(value: Any) -> Any:
    """As it reads back from the progress entry's JSON (tuples as lists, odd values as str)."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def before_load(wh, run_id: str, opts: Any, key: Dict[str, Any]) -> Any:
    """Check the identity known before the model loads; returns opts naming the dataset as recorded."""
    entry = _entry(wh, run_id)
    stored = {k: v for k, v in entry["resume"].items() if k != "settings"}
    _refuse_difference(run_id, stored, {k: v for k, v in key.items() if k != "settings"})
    return dataclasses.replace(opts, dataset=entry["run"].get("dataset") or opts.dataset)


def after_load(wh, run_id: str, key: Dict[str, Any]) -> None:
    """Check the loaded runner's settings (model id, revision, dtype, library versions, ...)."""
    _refuse_difference(run_id, {"settings": _entry(wh, run_id)["resume"].get("settings")},
                       {"settings": key["settings"]})


def _entry(wh, run_id: str) -> Dict[str, Any]:
    try:
        entry = run_progress.read(wh, run_id)
    except run_progress.ProgressError as exc:
        raise UsageError("cannot resume run %r: %s" % (run_id, exc)) from None
    if entry is None:
        raise UsageError("cannot resume run %r: no incomplete run with that id in warehouse %s" % (run_id, wh.root))
    return entry


def _refuse_difference(run_id: str, stored: Any, now: Any) -> None:
    found = first_difference(stored, now)
    if found:
        path, was, is_now = found
        raise UsageError("cannot resume run %r: %s differs (recorded %s, now %s); resume with the same dataset, "
                         "model and options" % (run_id, path, shorten(repr(was)), shorten(repr(is_now))))




class WholeRun:
    """How one process commits a whole run (run/execute.py): a new run id that is free, or with --resume
    the incomplete run it continues, checked against what that run recorded. shard.Shard commits one
    shard of a run instead."""

    def __init__(self, wh, opts: Any):
        self.wh, self.resume = wh, opts.resume
        self.run_id = opts.run_id or new_run_id()

    def check_id(self) -> None:
        check_state(self.wh, self.run_id, self.resume)

    def recorder(self, opts: Any, source: str) -> RunRecorder:
        return RunRecorder(self.wh, self.run_id, source, **commit_every(opts))

    def key(self, job: Any, recorder: Any) -> Dict[str, Any]:
        """The identity a resumed run must match (the loaded runner's settings join it later)."""
        return plain(dict(identity(job.opts, recorder, job.dataset_sha), **job.identity()))

    def before_load(self, job: Any, key: Dict[str, Any], rows: List[Any]) -> List[Any]:
        """Check a resumed run before the model loads; returns the rows this process answers."""
        if self.resume:
            job.opts = before_load(self.wh, self.run_id, job.opts, key)
        return rows

    def after_load(self, job: Any, key: Dict[str, Any]) -> None:
        key["settings"] = plain(job.settings())
        if self.resume:
            after_load(self.wh, self.run_id, key)

    @contextmanager
    def staging(self, recorder: Any, key: Dict[str, Any], rows: List[Any]) -> Iterator[Optional[Dict[str, Any]]]:
        """The staging area; yields the progress entry of the run taken over (None: a new run)."""
        with recorder.staging(resume=self.resume):
            yield recorder.resumed


def commit_every(opts: Any) -> Dict[str, Any]:
    """--commit-every / --commit-seconds as the recorder takes them (None: the defaults; 0: off)."""
    return {"commit_rows": COMMIT_ROWS if opts.commit_every is None else opts.commit_every,
            "commit_seconds": COMMIT_SECONDS if opts.commit_seconds is None else opts.commit_seconds}
