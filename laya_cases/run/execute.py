"""The one run loop: dataset -> runner -> decision rows -> a committed run (S6.7-S6.13).

`laya-cases run`, its shards, and every benchmark that asks a model (massive, robustness, presentation,
shortlist, relevance) commit through `execute`. What differs between them is a `Job` (job.py: the rows,
the calls, what a result records, the config); how this process commits is a part: the whole run
(resume.WholeRun: a new id, or `--resume ID`) or one shard of it (shard.Shard).

Decisions are committed in chunks as the run goes (after the call that completes every --commit-every
units or --commit-seconds; record.recorder.COMMIT_ROWS, COMMIT_SECONDS): a run that dies midway stays
as an incomplete run, and resuming it calls the runner only for what was not committed; the finished
run holds the very decision rows an uninterrupted run would. Under `--on-error fail` a runner exception
aborts the run (RunnerCrash, naming the run when chunks were committed).
"""
from __future__ import annotations

import time
from typing import Callable, Optional, Union

from laya_cases.record.recorder import RecordedRun
from laya_cases.run.inference import RunnerCrash
from laya_cases.run.job import Job
from laya_cases.run.options import RunOptions
from laya_cases.run.resume import WholeRun
from laya_cases.run.shard import Shard
from laya_cases.runners.base import Runner
from laya_cases.store.warehouse import Warehouse


def execute(wh: Warehouse, work: Union[RunOptions, Job], *, runner: Optional[Runner] = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Run the model over the job's rows and commit the run; returns its id and counts.

    `work` is a Job, or RunOptions for `laya-cases run`'s. `runner` replaces the --model resolution
    (tests, benchmarks); `clock` returns seconds and times each call; `on_loaded(total)` is called once
    the rows and the model are ready, `progress(done)` after each call (the job's units).

    A run that dies after a chunk is incomplete (`wh.run_state(id)`), and the same work with
    `resume=True` and its run id finishes it; a different dataset, model or option is a UsageError
    naming it. With `shard=(I, N)` this process scores shard I of N (shard.py).
    """
    job = work if isinstance(work, Job) else Job(work)
    job.check()
    part = Shard(wh, job.opts) if job.opts.shard is not None else WholeRun(wh, job.opts)
    part.check_id()                   # before anything is read
    rows = job.read()
    recorder = part.recorder(job.opts, job.source)
    buffer = job.new_buffer()
    if buffer is not None:
        recorder.buffer = buffer
    for row in rows:                  # the whole identity first: a bad row fails before the model loads
        recorder.note_row(row)
    key = part.key(job, recorder)
    mine = part.before_load(job, key, rows)
    job.load(mine, rows, runner, clock)
    part.after_load(job, key)
    if on_loaded:
        on_loaded(job.units())

    def checkpoint(done: int) -> None:
        if recorder.chunk_due(done):
            recorder.commit_chunk(done, key, **job.run_row())

    try:
        with part.staging(recorder, key, rows) as entry:
            job.run(recorder, progress, job.restore(entry, recorder), checkpoint)
            return recorder.commit(**job.run_row())
    except RunnerCrash as crash:
        crash.run_id = part.run_id    # committed chunks stay as an incomplete run (`--resume` continues it)
        raise
