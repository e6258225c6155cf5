"""`massive run`: one model over MASSIVE, every language's decisions rows of ONE committed run (S7.1-S7.4).

Per language (a short code, the slice `language`): the whole test split is read (data.py), the
first `per_lang` rows are sampled exactly as the reference does (laya_cases.harness.massive.sampler:
a fresh random.Random(seed) per language, n_opts options, the fixed instruction, option texts), and
every row carries `item_id` (the MASSIVE id) and its state `{"utterance": text}`. All rows then
go through the run loop of `laya-cases run` (MassiveJob on laya_cases.run.execute: chunking, timing,
--on-error, chunk commits and --resume, the runner registry and its flags); the decision rows also
store the state as compact JSON (`state_json`), so the harness document (S7.7) is recomputed from the
store. A Laya
checkpoint runner is asked for unrounded probabilities (`exact`) and stores raw logits and both
temperatures. The run's config records the harness parameters under `massive` (S7.8).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.harness.massive import data, sampler
from laya_cases.record.recorder import RecordedRun
from laya_cases.run.execute import execute
from laya_cases.run.job import Job
from laya_cases.run.options import RunOptions
from laya_cases.runners import registry
from laya_cases.runners.base import Runner
from laya_cases.store.warehouse import Warehouse

SCHEMA = "laya-cases-massive/1"


@dataclass
class Harness:
    """What `massive run` samples (S7.2): languages in order, rows per language, options, seed, source."""

    langs: List[str]
    per_lang: int = 100
    n_opts: int = sampler.N_OPTS
    seed: int = sampler.SEED
    data: Optional[Path] = None

    def check(self) -> None:
        if isinstance(self.per_lang, bool) or self.per_lang < 1:
            raise UsageError("--per-lang must be >= 1, got %r" % (self.per_lang,))
        if isinstance(self.n_opts, bool) or self.n_opts < 2:
            raise UsageError("--n-opts must be >= 2, got %r" % (self.n_opts,))

    def config(self, sources: Dict[str, str]) -> Dict[str, Any]:
        dataset, split = data.describe(self.data)
        return {"schema": SCHEMA, "dataset": dataset, "split": split, "langs": list(self.langs),
                "per_lang": self.per_lang, "n_opts": self.n_opts, "seed": self.seed,
                "instructions": sampler.INSTRUCTIONS, "sources": sources}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_rows(harness: Harness) -> tuple:
    """(dataset rows of every language in --langs order, {code: source}); data is read before any model."""
    rows: List[Dict[str, Any]] = []
    sources: Dict[str, str] = {}
    for code in harness.langs:
        language = data.load(code, harness.data)
        rows.extend(sampler.sample_rows(language.records, code, harness.per_lang, harness.n_opts, harness.seed))
        sources[code] = language.source
    return rows, sources


def _runner_options(opts: RunOptions) -> RunOptions:
    """A Laya checkpoint answers with unrounded probabilities from its logits (S7.7), its ONNX export too."""
    name, _cls, _arg = registry.resolve(opts.model, opts.runner)
    if name in ("laya-agent", "laya-onnx") and "exact" not in opts.runner_options:
        return dataclasses.replace(opts, runner_options=dict(opts.runner_options, exact=True))
    return opts


class MassiveJob(Job):
    """`massive run` on the run loop: the sampled rows of every language, each answer's state stored."""

    def __init__(self, opts: RunOptions, harness: Harness):
        super().__init__(opts)
        self.harness = harness

    def check(self) -> None:
        self.harness.check()
        super().check()

    @property
    def source(self) -> str:
        return "massive:%s" % ",".join(self.harness.langs)

    def read(self) -> List[D.Row]:
        """Every language's sample, read before any model loads; the digest is of the sampled rows."""
        raw, self.sources = build_rows(self.harness)
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in raw)
        self.dataset_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.opts = dataclasses.replace(self.opts, dataset=data.describe(self.harness.data)[0])
        return [D.Row(index=i, line_no=i + 1, raw=r) for i, r in enumerate(raw)]

    def load(self, rows: List[D.Row], every: List[D.Row], runner: Optional[Runner],
             clock: Callable[[], float]) -> None:
        if runner is None:
            self.opts = _runner_options(self.opts)
        super().load(rows, every, runner, clock)

    def facts(self, row: D.Row, result: Dict[str, Any], qid: str) -> Dict[str, Any]:
        return dict(super().facts(row, result, qid), state_json=compact(row.state))

    def config(self) -> Dict[str, Any]:
        return dict(super().config(), massive=self.harness.config(self.sources))


def run_harness(wh: Warehouse, opts: RunOptions, harness: Harness, *, runner: Optional[Runner] = None,
                clock: Callable[[], float] = time.perf_counter, progress: Optional[Callable[[int], None]] = None,
                on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Sample every language, run the model over all rows as one run, commit it (as `run` does)."""
    return execute(wh, MassiveJob(opts, harness), runner=runner, clock=clock, progress=progress,
                   on_loaded=on_loaded)
