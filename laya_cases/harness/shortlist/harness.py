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
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.run import execute as run_mod
from laya_cases.run.options import RunOptions, check_options
from laya_cases.record.recorder import RecordedRun
from laya_cases.runners import registry
from laya_cases.runners.base import Runner
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
    from laya_cases.runners.embedding import EmbeddingRunner

    _name, cls, _arg = registry.resolve(name)
    if not (isinstance(cls, type) and issubclass(cls, EmbeddingRunner)):
        raise UsageError("--embedder %s is not a sentence embedder (minilm, use-multilingual)" % name)
    embedder = registry.load(name, device=device)
    return cached(embedder._encode), embedder.info.model_id


def _checkpoint_id(runner: Runner) -> str:
    info = runner.info
    return "%s@%s" % (info.model_id, info.revision) if info.revision else str(info.model_id)


def execute(wh: Warehouse, opts: ShortlistOptions, *, runner: Optional[Runner] = None,
            embed: Optional[Callable[[Sequence[str]], Any]] = None, embedder_id: Optional[str] = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Check the setup (S7.17), load the decision runner (and the embedder), run and commit.

    `runner`, `embed` and `embedder_id` replace the loading by name (tests, scripted doubles).
    """
    R.check_group_size(opts.group_size)          # checked with or without --tournament: a bad value is a mistake
    if not opts.tournament:
        R.check_k(opts.k)
    run_opts = RunOptions(dataset=opts.dataset, model=opts.model, run_id=opts.run_id, device=opts.device)
    check_options(run_opts)
    if opts.run_id is not None and wh.has_run(opts.run_id):
        raise UsageError("run id %r already exists in warehouse %s" % (opts.run_id, wh.root))
    rows = D.load(opts.dataset)
    R.check_rows(opts.dataset, rows)
    if runner is None:
        runner = registry.load(opts.model, device=opts.device)
    if not opts.tournament and embed is None:
        embed, embedder_id = load_embedder(opts.embedder, opts.device)
    if not opts.tournament and (not isinstance(embedder_id, str) or not embedder_id.strip()):
        raise UsageError("the embedder id must be a non-blank string")
    checkpoint = _checkpoint_id(runner)
    wrapper = NarrowingRunner(runner, rows, k=None if opts.tournament else opts.k,
                              embed=embed, group_size=opts.group_size if opts.tournament else None,
                              embedder_id=embedder_id)
    return run_mod.execute(wh, run_opts, runner=wrapper, clock=clock, progress=progress, on_loaded=on_loaded,
                           extend_config=lambda config: wrapper.config_block(config, checkpoint, embedder_id))
