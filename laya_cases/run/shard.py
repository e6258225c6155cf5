"""Sharded runs: `laya-cases run DATASET --shard I/N --run-id ID` on N hosts or processes.

Shard I of N scores the contiguous rows [floor((I-1)*n/N), floor(I*n/N)) of the n dataset rows and
commits them, in chunks as any run does, as part of run ID (store/shards.py has the store protocol);
the run is complete, and in the runs table, once all N shards are in. Contiguous ranges, not
`row % N`: each shard's part files hold rows in dataset order (row-group statistics on row_index
stay tight), its runner calls group the same consecutive rows as an unsharded run's (S6.12), and
its call ids can start at its first row (unique across shards, no coordination). The cost is
balance when row lengths drift along the file; a shuffled dataset evens it out.

The sharded run's decisions are the unsharded run's: every shard reads the whole dataset (the
run's identity is over every row), numbers repeated cases (`<digest>#n`) counting the rows before
its share, and takes slice-set ids from one run-wide registry. What differs is per call: call ids,
call_ms and chunk sizes at shard boundaries, so timing metrics, and `settings.shards`.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from laya_cases.core import dataset as D
from laya_cases.core.errors import UsageError, shorten
from laya_cases.record.decisions import DecisionBuffer, case_digest
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.run import resume as RS
from laya_cases.run.inference import Calls
from laya_cases.store import shards as S
from laya_cases.store.write import staging_area


_SHARD = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$", re.ASCII)     # ASCII digits: not '１/２'



def parse_shard(text: Any) -> Tuple[int, int]:
    """`I/N` -> (I, N): 1 <= I <= N <= 9999; else UsageError."""
    match = _SHARD.match(str(text)) if text is not None else None
    if not match:
        raise UsageError("--shard expects I/N (this process's shard of N, 1-based), got %s" % shorten(repr(text)))
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= S.MAX_SHARDS:
        raise UsageError("--shard %s: N must be 1..%d" % (text, S.MAX_SHARDS))
    if not 1 <= index <= count:
        raise UsageError("--shard %s: I must be 1..%d" % (text, count))
    return index, count


def share(n_rows: int, index: int, count: int) -> Tuple[int, int]:
    """Shard `index`'s rows [lo, hi) of n_rows: contiguous, sizes differ by at most one."""
    return (index - 1) * n_rows // count, index * n_rows // count


@dataclass(frozen=True)
class ShardRun(RecordedRun):
    """One shard committed: n_cases / n_errors are this shard's; `missing` the shards not yet in
    (empty: this shard completed the run)."""

    shard: int
    count: int
    missing: Tuple[int, ...]

    @property
    def complete(self) -> bool:
        return not self.missing


def identity(opts: Any, recorder: Any, dataset_sha256: str, count: int) -> Dict[str, Any]:
    """What every shard of a run shares: the resume identity (dataset, rows, questions, model and
    options), without the device (shards may differ) and --crash-exit-code, plus N."""
    key = RS.identity(opts, recorder, dataset_sha256)
    for name in ("device", "crash_exit_code"):
        key["options"].pop(name, None)
    key["shard_count"] = count
    return key


def settings_key(settings: Dict[str, Any]) -> Dict[str, Any]:
    """The loaded runner's settings as shards compare them: not the device they run on, and library
    versions without their local build label (torch `2.5.1+cu121` on a GPU host is `2.5.1+cpu`'s peer)."""
    plain = RS.plain(settings)
    for name in ("device", "crash_exit_code"):
        plain.pop(name, None)
    if isinstance(plain.get("versions"), dict):
        plain["versions"] = {k: v.split("+", 1)[0] if isinstance(v, str) else v for k, v in plain["versions"].items()}
    return plain


class ShardBuffer(DecisionBuffer):
    """Decision rows of one shard: case ids numbered as in the whole run, slice-set ids run-wide."""

    def __init__(self, wh, run_id: str, before: List[D.Row]):
        super().__init__()
        self.wh, self.run_id = wh, run_id
        for row in before:                       # the cases of earlier shards' rows come first in the run
            for qid in row.expected:
                digest = case_digest(row, qid)
                self._seen[digest] = self._seen.get(digest, 0) + 1

    def _slice_set(self, combo: tuple) -> Optional[int]:
        found = self._slice_sets.get(combo)
        if found is None:
            found, known = S.slice_set_id(self.wh, self.run_id, combo)
            for i, values in enumerate(known):
                self._slice_sets[S.combo_key(values)] = i
        return found


class ShardRecorder(RunRecorder):
    """RunRecorder for shard I/N: its rows [lo, hi) of the noted dataset, committed through shard_store."""

    def __init__(self, wh, run_id: str, source: str, index: int, count: int, **kw: Any):
        super().__init__(wh, run_id, source, **kw)
        self.index, self.count = index, count
        self.lo = self.hi = 0

    @contextmanager
    def shard_staging(self, rows: List[D.Row], key: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        """Claim the shard (a dead writer's record is taken over and continued); yields its record."""
        with staging_area(self.wh, self.run_id) as staged:
            record = S.claim(staged, self.index, self.count, (self.lo, self.hi), key)
            self.buffer = ShardBuffer(self.wh, self.run_id, rows[:self.lo])
            self._staged = staged
            try:
                if record["parts"]:
                    self._restore_shard(record)
                yield record
            finally:
                self._staged = None

    def _restore_shard(self, record: Dict[str, Any]) -> None:
        committed = self.wh.committed_cases(self.run_id, ["case_id"], parts=record["parts"])["case_id"]
        self.buffer.continue_from(committed, S.registry(self.wh, self.run_id), record["run"]["n_cases"],
                                  record["run"]["n_errors"])
        self.resumed = record
        self._last_rows = record["rows_committed"]

    def commit_chunk(self, rows_done: int, resume: Dict[str, Any], **run: Any) -> None:
        self._staged.write(self.buffer.take())
        S.commit(self._staged, self.index, self.count, self._run_row(**run), rows_done, final=False)
        self._last_rows, self._last_time = rows_done, time.monotonic()

    def commit(self, **run: Any) -> ShardRun:
        self._staged.write(self.buffer.take())
        left = S.commit(self._staged, self.index, self.count, self._run_row(**run), self.hi - self.lo, final=True)
        return ShardRun(self.run_id, self.n_rows, self.buffer.n_cases, self.buffer.n_errors, self.index, self.count,
                        tuple(left))


class Shard(RS.WholeRun):
    """How shard I of N commits its rows into run opts.run_id (run/execute.py): the shard that completes
    the run commits its runs entry; a shard whose earlier writer died continues from its committed
    chunks. Progress and on_loaded count this shard's rows."""

    def __init__(self, wh, opts: Any):
        if not opts.run_id:
            raise UsageError("--shard needs --run-id: every shard of a run names the same id")
        self.wh, self.run_id, self.resume = wh, opts.run_id, False
        self.index, self.count = opts.shard

    def check_id(self) -> None:
        """Checked with the run's identity, once the rows are read (before_load)."""

    def recorder(self, opts: Any, source: str) -> RunRecorder:
        return ShardRecorder(self.wh, self.run_id, source, self.index, self.count, **RS.commit_every(opts))

    def key(self, job: Any, recorder: Any) -> Dict[str, Any]:
        return dict(identity(job.opts, recorder, job.dataset_sha, self.count), **RS.plain(job.identity()))

    def before_load(self, job: Any, key: Dict[str, Any], rows: List[D.Row]) -> List[D.Row]:
        self.lo, self.hi = share(len(rows), self.index, self.count)
        S.refuse(self.wh, self.run_id, self.index, self.count, key)       # before the model loads: nothing written
        return rows[self.lo:self.hi]

    def after_load(self, job: Any, key: Dict[str, Any]) -> None:
        job.calls = _OffsetCalls(base=self.lo)
        key["settings"] = settings_key(job.settings())

    @contextmanager
    def staging(self, recorder: Any, key: Dict[str, Any], rows: List[D.Row]) -> Iterator[Optional[Dict[str, Any]]]:
        recorder.lo, recorder.hi = self.lo, self.hi
        with recorder.shard_staging(rows, key) as record:
            yield record if record["parts"] else None


class _OffsetCalls:
    """inference.Calls whose call ids start at the shard's first row (ids stay unique across shards)."""

    def __init__(self, base: int):
        self._calls, self.base = Calls(), base

    def add(self, size: int) -> int:
        return self._calls.add(size) + self.base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._calls, name)
