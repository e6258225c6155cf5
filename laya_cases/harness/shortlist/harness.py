"""`laya-cases shortlist`: a dataset through a NarrowingRunner, committed by the ordinary run path.

The run is an ordinary run (same chunking, timing, errors, commit); what differs is the runner
(runner.NarrowingRunner around the decision runner) and the report config: schema
`laya-shortlist-evals-report/1` with `shortlist {k, checkpoint_id, embedder_id, counts}`, or
`laya-tournament-evals-report/1` with `tournament_group_size` and `tournament {group_size,
checkpoint_id, counts}` (S7.19, S7.20), beside the usual `dataset` and `dataset_sha256`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.run.execute import execute as run_execute
from laya_cases.run.job import Job
from laya_cases.run.options import RunOptions
from laya_cases.record.recorder import RecordedRun
from laya_cases.runners import registry
from laya_cases.runners.base import Runner
from laya_cases.runners.embedding import EmbeddingRunner
from laya_cases.store.warehouse import Warehouse
from laya_cases.harness.shortlist.constants import DEFAULT_GROUP_SIZE, DEFAULT_K
from laya_cases.harness.shortlist import retrieval as R
from laya_cases.harness.shortlist.runner import NarrowingRunner


@dataclass
class ShortlistOptions:
    dataset: str
    model: Optional[str] = None
    k: int = DEFAULT_K
    embedder: str = "minilm"
    tournament: bool = False
    group_size: int = DEFAULT_GROUP_SIZE
    run_id: Optional[str] = None
    device: Optional[str] = None


def cached(embed: Callable[[Sequence[str]], Any]) -> Callable[[Sequence[str]], np.ndarray]:
    """Embed each distinct text once per process (a label set repeats on every row)."""
    memo: Dict[str, np.ndarray] = {}

    def call(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            for text, vec in zip(missing, np.asarray(embed(missing), dtype=np.float64)):
                memo[text] = vec
        return np.stack([memo[t] for t in texts])

    return call


def load_embedder(name: str, device: Optional[str]) -> Tuple[Callable[[Sequence[str]], np.ndarray], str]:
    """(embed function, embedder id) of a sentence-embedding runner by name (minilm, use-multilingual)."""
    _name, cls, _arg = registry.resolve(name)
    if not (isinstance(cls, type) and issubclass(cls, EmbeddingRunner)):
        raise UsageError("--embedder %s is not a sentence embedder (minilm, use-multilingual)" % name)
    embedder = registry.load(name, device=device)
    return cached(embedder._encode), embedder.info.model_id


def _checkpoint_id(runner: Runner) -> str:
    info = runner.info
    return "%s@%s" % (info.model_id, info.revision) if info.revision else str(info.model_id)


class ShortlistJob(Job):
    """`laya-cases shortlist` on the run loop: the decision runner behind a NarrowingRunner, and the
    shortlist (or tournament) block in the config."""

    def __init__(self, opts: ShortlistOptions, embed: Optional[Callable[[Sequence[str]], Any]],
                 embedder_id: Optional[str]):
        super().__init__(RunOptions(dataset=opts.dataset, model=opts.model, run_id=opts.run_id, device=opts.device))
        self.shortlist, self.embed, self.embedder_id = opts, embed, embedder_id

    def check(self) -> None:
        R.check_group_size(self.shortlist.group_size)    # checked with or without --tournament: a bad value is a mistake
        if not self.shortlist.tournament:
            R.check_k(self.shortlist.k)
        super().check()

    def check_rows(self, rows: List[D.Row]) -> None:
        R.check_rows(self.opts.dataset, rows)
        super().check_rows(rows)

    def identity(self) -> Dict[str, Any]:
        o = self.shortlist
        return {"shortlist": {"k": None if o.tournament else o.k, "embedder": o.embedder, "tournament": o.tournament,
                              "group_size": o.group_size if o.tournament else None}}

    def load(self, rows: List[D.Row], every: List[D.Row], runner: Optional[Runner],
             clock: Callable[[], float]) -> None:
        """Load the decision runner (and the embedder), then narrow its options on every row."""
        o = self.shortlist
        inner = runner if runner is not None else registry.load(o.model, device=o.device)
        if not o.tournament and self.embed is None:
            self.embed, self.embedder_id = load_embedder(o.embedder, o.device)
        if not o.tournament and (not isinstance(self.embedder_id, str) or not self.embedder_id.strip()):
            raise UsageError("the embedder id must be a non-blank string")
        self.checkpoint_id = _checkpoint_id(inner)
        self.wrapper = NarrowingRunner(inner, every, k=None if o.tournament else o.k, embed=self.embed,
                                       group_size=o.group_size if o.tournament else None,
                                       embedder_id=self.embedder_id)
        super().load(rows, every, self.wrapper, clock)

    def config(self) -> Dict[str, Any]:
        config = super().config()
        self.wrapper.config_block(config, self.checkpoint_id, self.embedder_id)
        return config


def execute(wh: Warehouse, opts: ShortlistOptions, *, runner: Optional[Runner] = None,
            embed: Optional[Callable[[Sequence[str]], Any]] = None, embedder_id: Optional[str] = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Check the setup (S7.17), load the decision runner (and the embedder), run and commit.

    `runner`, `embed` and `embedder_id` replace the loading by name (tests, scripted doubles).
    """
    return run_execute(wh, ShortlistJob(opts, embed, embedder_id), runner=runner, clock=clock, progress=progress,
                       on_loaded=on_loaded)
