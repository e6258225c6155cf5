"""`laya-cases robustness`: every case asked three ways, each answer a decision row of one run (S7.13-S7.14).

Passes over the dataset, in order: baseline (every row, so baseline case ids equal a plain run's),
then option_order, then label_rename. Each pass groups consecutive rows whose presented question is
the same into one runner call (S6.12 chunking, `--batch-size`). A runner exception fails the
language(s) of that call: the call's rows become error records, the language's later cases are not
asked, and the language is listed in `config.robustness.failed_languages` (the command exits 1); the
other languages are kept and committed. A returned vector that is not a distribution (S7.14) is an
error record for that presentation only.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core import dataset as D
from laya_cases.core import identity as I
from laya_cases.run.inference import _Calls, _facts, answered_model, chunks, signature
from laya_cases.run.load import _load_runner, _versions
from laya_cases.run.options import RunOptions, check_options
from laya_cases.core import strict
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import new_run_id
from laya_cases.harness.robustness import variants as V
from laya_cases.harness.robustness.buffer import VariantBuffer, answer_text, variant_case_id

SCHEMA = "laya-cases-robustness/1"


@dataclass
class RobustnessOptions:
    dataset: str
    model: Optional[str] = None
    runner: Optional[str] = None
    seed: int = V.SEED
    run_id: Optional[str] = None
    batch_size: Optional[int] = None
    device: Optional[str] = None
    revision: Optional[str] = None
    runner_options: Dict[str, Any] = field(default_factory=dict)

    def run_options(self) -> RunOptions:
        return RunOptions(dataset=self.dataset, model=self.model, runner=self.runner, run_id=self.run_id,
                            batch_size=self.batch_size, device=self.device, revision=self.revision,
                            runner_options=dict(self.runner_options), on_error="skip")


@dataclass
class Case:
    """One dataset row's choice question and its three presentations."""

    row: D.Row
    qid: str
    keys: List[str]
    language: str                     # language group key ('' when the row has none)
    variants: List[V.Variant]
    parent: Optional[str] = None      # the baseline case id, once recorded


def _case_of(source: str, row: D.Row) -> Case:
    """S7.13 input: exactly one choice question, criteria an object of >= 2 non-blank keys, labelled or null."""
    where = "%s:%d" % (source, row.line_no)
    if len(row.questions) != 1:
        raise UsageError("%s questions: robustness needs exactly one choice question per row, got %d"
                         % (where, len(row.questions)))
    qid, body = next(iter(row.questions.items()))
    if not isinstance(body, dict) or body.get("type") != "choice":
        raise UsageError("%s questions['%s'].type: robustness needs a choice question" % (where, shorten(qid)))
    criteria = body.get("criteria")
    if not isinstance(criteria, dict) or len(criteria) < 2 or any(not k.strip() for k in criteria):
        raise UsageError("%s questions['%s'].criteria: robustness needs an object of at least 2 non-blank keys"
                         % (where, shorten(qid)))
    if qid not in row.expected:
        raise UsageError("%s expected: no entry for '%s' (use null for an unlabelled case)" % (where, shorten(qid)))
    language = D.slice_key(row.language)
    return Case(row, qid, list(criteria), "" if language is None else language, [])


def _labelled_probe(row: D.Row) -> D.Row:
    """The row as `validate --strict` should judge it: a null label (an unlabelled case, S7.13) is allowed
    here, so it is checked as if it named the first option."""
    if not any(v is None for v in row.expected.values()):
        return row
    expected = {qid: (next(iter(row.questions[qid]["criteria"]), None)
                      if label is None and isinstance(row.questions.get(qid), dict)
                      and isinstance(row.questions[qid].get("criteria"), dict) else label)
                for qid, label in row.expected.items()}
    return D.Row(row.index, row.line_no, dict(row.raw, expected=expected), row.tags)


def plan(source: str, rows: List[D.Row], seed: int) -> List[Case]:
    """The cases in row order, each with its variants (one random.Random(seed) stream per language)."""
    cases = [_case_of(source, row) for row in rows]
    by_language: Dict[str, List[Case]] = {}
    for case in cases:
        by_language.setdefault(case.language, []).append(case)
    for group in by_language.values():
        for case, s in zip(group, V.case_seeds(seed, len(group))):
            case.variants = V.variants(case.keys, s)
    return cases


class _Passes:
    """The runner calls of the three passes; rows go to the recorder as each call returns."""

    def __init__(self, opts: RobustnessOptions, runner: Any, cases: List[Case], recorder: RunRecorder,
                 clock: Callable[[], float]):
        self.opts, self.runner, self.cases, self.recorder, self.clock = opts, runner, cases, recorder, clock
        self.buffer: VariantBuffer = recorder.buffer        # type: ignore[assignment]
        self.model = opts.model
        self.batching = bool(opts.batch_size and opts.batch_size > 1 and runner.capabilities.batching)
        self.calls = _Calls()
        self.failed: Dict[str, str] = {}
        self.not_distributions = 0

    def run(self, progress: Optional[Callable[[int], None]]) -> None:
        done = 0
        for k, kind in enumerate(V.KINDS):
            todo = [c for c in self.cases if c.language not in self.failed]
            bodies = [c.variants[k].body(c.row.questions[c.qid]) for c in todo]
            sigs = [signature({c.qid: b}) for c, b in zip(todo, bodies)]
            for positions in chunks(todo, [None] * len(todo), self.opts.batch_size, self.batching, sigs):
                chunk = [todo[p] for p in positions if todo[p].language not in self.failed]
                if chunk:
                    self._call(chunk, k, {chunk[0].qid: bodies[positions[0]]})
                done += len(positions)
                self.recorder.flush()
                if progress:
                    progress(done)

    def _call(self, chunk: List[Case], k: int, questions: Dict[str, Any]) -> None:
        call_id = self.calls.add(len(chunk))
        started = self.clock()
        try:
            results = self.runner.predict_batch([c.row.state for c in chunk], questions)
            if not isinstance(results, list) or len(results) != len(chunk):
                raise RuntimeError("runner returned %s results for %d states"
                                   % (len(results) if isinstance(results, list) else type(results).__name__,
                                      len(chunk)))
        except Exception as exc:     # noqa: BLE001 -- fails the chunk's languages, the others go on
            message = "%s: %s" % (type(exc).__name__, exc)
            call = {"call_id": call_id, "call_ms": None, "chunk_size": len(chunk), "returned": False}
            for case in chunk:
                self.failed.setdefault(case.language, message[:200])
                self._error(case, k, message, call)
            return
        call = {"call_id": call_id, "call_ms": (self.clock() - started) * 1000.0, "chunk_size": len(chunk),
                "returned": True}
        for case, result in zip(chunk, results):
            self._returned(case, k, result if isinstance(result, dict) else {}, call)

    def _extra(self, case: Case, k: int) -> Dict[str, Any]:
        variant = case.variants[k]
        extra: Dict[str, Any] = {"variant": variant.kind, "slot_order": list(variant.slot_order),
                                 "presented_labels": list(variant.presented_labels)}
        if k > 0:
            extra.update(parent_case_id=case.parent, case_id=variant_case_id(case.parent or "", variant.kind))
        return extra

    def _error(self, case: Case, k: int, message: str, call: Dict[str, Any]) -> None:
        self.buffer.add_variant_error(case.row, message, qid=case.qid, qid_pos=0, model=self.model, call=call,
                                      extra=self._extra(case, k))
        if k == 0:
            case.parent = self.buffer.last_case_id

    def _returned(self, case: Case, k: int, result: Dict[str, Any], call: Dict[str, Any]) -> None:
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        answer = answers.get(case.qid)
        if not isinstance(answer, dict):
            return self._error(case, k, "missing answer", call)
        variant = case.variants[k]
        try:
            canonical = V.canonical_answer(answer, variant, case.keys)
        except V.NotADistribution as exc:
            self.not_distributions += 1
            return self._error(case, k, "S7.14: %s" % exc, call)
        extra = dict(_facts(result, case.qid), **self._extra(case, k))
        extra["answer_json"] = answer_text(answer)
        if "logits" in extra:
            extra["logits"] = V.canonical_logits(extra["logits"], variant)
        model = self.model or answered_model(result)
        self.recorder.add_answers(case.row, {case.qid: canonical}, model=model, call=call,
                                  field="runner answer", missing=lambda pos, qid: None,
                                  extra=lambda qid: extra)
        if k == 0:
            case.parent = self.buffer.last_case_id


def execute(wh: Warehouse, opts: RobustnessOptions, *, runner: Any = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Ask every case in its three presentations and commit one run; returns its id and counts."""
    run_opts = opts.run_options()
    check_options(run_opts)
    if isinstance(opts.seed, bool) or not isinstance(opts.seed, int) or opts.seed < 0:
        raise UsageError("--seed must be a non-negative integer, got %r" % (opts.seed,))
    run_id = opts.run_id or new_run_id()
    if wh.has_run(run_id):
        raise UsageError("run id %s already exists in warehouse %s" % (shorten(repr(run_id)), wh.root))
    rows = D.load(opts.dataset)
    strict.refuse_errors(opts.dataset, [_labelled_probe(row) for row in rows])
    cases = plan(opts.dataset, rows, opts.seed)
    recorder = RunRecorder(wh, run_id, opts.dataset)
    recorder.buffer = VariantBuffer()
    for row in rows:
        recorder.note_row(row)
    loaded = _load_runner(run_opts, rows, runner)
    if on_loaded:
        on_loaded(len(cases) * len(V.KINDS))
    passes = _Passes(opts, loaded, cases, recorder, clock)
    dataset_sha = I.file_sha256(opts.dataset)
    info = loaded.info
    with recorder.staging():
        passes.run(progress)
        config = {"dataset": opts.dataset, "model": opts.model, "device": opts.device,
                  "dataset_sha256": dataset_sha, "revisions": {info.model_id: info.revision},
                  "robustness": {"schema": SCHEMA, "seed": opts.seed, "kinds": list(V.KINDS),
                                 "failed_languages": dict(sorted(passes.failed.items())),
                                 "not_a_distribution": passes.not_distributions,
                                 "calls": passes.calls.chunks, "batch_size": opts.batch_size}}
        settings = dict(info.settings, runner=info.runner, model_id=info.model_id, model_revision=info.revision,
                        device=info.device, seed=opts.seed, batch_size=opts.batch_size,
                        runner_options=dict(opts.runner_options), runner_requested=opts.runner,
                        versions=_versions())
        return recorder.commit(kind="robustness", dataset=opts.dataset, dataset_sha256=dataset_sha,
                               runner=info.runner, model_id=info.model_id, model_revision=info.revision,
                               config=config, settings=settings)
