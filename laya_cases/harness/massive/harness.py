"""`massive run`: one model over MASSIVE, every language's decisions rows of ONE committed run (S7.1-S7.4).

Per language (a short code, the slice `language`): the whole test split is read (data.py), the
first `per_lang` rows are sampled exactly as the reference does (laya_cases.harness.massive.sampler:
a fresh random.Random(seed) per language, n_opts options, the fixed instruction, option texts), and
every row carries `item_id` (the MASSIVE id) and its state `{"utterance": text}`. All rows then
go through the same inference path as `laya-cases run` (laya_cases.run.execute: chunking, timing,
--on-error, the runner registry and its flags); the decision rows also store the state as compact
JSON (`state_json`), so the harness document (S7.7) is recomputed from the store. A Laya
checkpoint runner is asked for unrounded probabilities (`exact`) and stores raw logits and both
temperatures. The run's config records the harness parameters under `massive` (S7.8).
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.run.inference import _Inference
from laya_cases.run.load import _load_runner
from laya_cases.run.options import RunOptions, check_options
from laya_cases.harness.massive import sampler
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.runners import registry
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import new_run_id
from laya_cases.harness.massive import data

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


class StateFacts:
    """A runner seen through the harness: every answer's facts also carry the state (`state_json`)."""

    def __init__(self, runner: Any) -> None:
        self.runner, self.capabilities, self.info = runner, runner.capabilities, runner.info
        self.name = getattr(runner, "name", "runner")

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> Any:
        results = self.runner.predict_batch(states, questions, **kwargs)
        if isinstance(results, list):
            for state, result in zip(states, results):
                if isinstance(result, dict):
                    facts = result.get("facts") if isinstance(result.get("facts"), dict) else {}
                    result["facts"] = {q: dict(facts.get(q) or {}, state_json=compact(state)) for q in questions}
        return results


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
    """A Laya checkpoint answers with unrounded probabilities from its logits (S7.7)."""
    name, _cls, _arg = registry.resolve(opts.model, opts.runner)
    if name == "laya-agent" and "exact" not in opts.runner_options:
        opts.runner_options = dict(opts.runner_options, exact=True)
    return opts


def run_harness(wh: Warehouse, opts: RunOptions, harness: Harness, *, runner: Optional[Any] = None,
            clock: Callable[[], float] = time.perf_counter, progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Sample every language, run the model over all rows as one run, commit it (as `run` does)."""
    harness.check()
    check_options(opts)
    run_id = opts.run_id or new_run_id()
    if wh.has_run(run_id):
        raise UsageError("run id %r already exists in warehouse %s" % (run_id, wh.root))
    raw, sources = build_rows(harness)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in raw)
    dataset_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    opts.dataset = data.describe(harness.data)[0]
    rows = [D.Row(index=i, line_no=i + 1, raw=r) for i, r in enumerate(raw)]
    recorder = RunRecorder(wh, run_id, "massive:%s" % ",".join(harness.langs))
    for row in rows:
        recorder.note_row(row)
    if runner is None:
        opts = _runner_options(opts)
    loaded = _load_runner(opts, rows, runner)          # the registry and the capability checks of `run`
    inference = _Inference(opts, StateFacts(loaded), rows, clock)
    if on_loaded:
        on_loaded(len(rows))
    with recorder.staging():
        inference.run(recorder, progress)
        info = loaded.info
        config = dict(inference.config(dataset_sha), massive=harness.config(sources))
        return recorder.commit(kind="run", dataset=opts.dataset, dataset_sha256=dataset_sha, runner=info.runner,
                               model_id=info.model_id, model_revision=info.revision, config=config,
                               settings=inference.settings())
