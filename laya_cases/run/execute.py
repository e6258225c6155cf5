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

import time
from typing import Any, Callable, Dict, Optional

from laya_cases.core import dataset as D, identity as I, strict
from laya_cases.record.recorder import COMMIT_ROWS, COMMIT_SECONDS, RecordedRun, RunRecorder
from laya_cases.run import resume as RS, shard
from laya_cases.run.inference import RunnerCrash, _Inference
from laya_cases.run.load import _load_runner
from laya_cases.run.options import RunOptions, check_options
from laya_cases.runners.base import Runner
from laya_cases.store.layout import new_run_id
from laya_cases.store.warehouse import Warehouse





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
