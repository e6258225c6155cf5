"""`laya-cases robustness`: every case asked three ways, each answer a decision row of one run (S7.13-S7.14).

Passes over the dataset, in order: baseline (every row, so baseline case ids equal a plain run's),
then option_order, then label_rename. Each pass groups consecutive rows whose presented question is
the same into one runner call (S6.12 chunking, `--batch-size`). A runner exception fails the
language(s) of that call: the call's rows become error records, the language's later cases are not
asked, and the language is listed in `config.robustness.failed_languages` (the command exits 1); the
other languages are kept and committed. A returned vector that is not a distribution (S7.14) is an
error record for that presentation only. The passes run on the run loop of `laya-cases run`
(RobustnessJob): chunk commits and `resume` as for any run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from laya_cases.core import dataset as D, strict
from laya_cases.core.errors import UsageError, shorten
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.run.execute import execute as run_execute
from laya_cases.run.flags import exact_laya
from laya_cases.run.inference import answered_model, chunks, signature
from laya_cases.run.job import Call, Job
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse
from laya_cases.harness.robustness import variants as V
from laya_cases.harness.robustness.buffer import VariantBuffer, answer_text, variant_case_id

SCHEMA = "laya-cases-robustness/1"


@dataclass
class Sample:
    """Rows made in-process instead of read from a DATASET file: `robustness --langs` samples MASSIVE as
    `massive run` does (the CLI composes the two benchmarks; neither imports the other)."""

    name: str                 # recorded as the run's dataset (e.g. mteb/amazon_massive_intent)
    source: str               # what a bad row's message names (e.g. massive:en,de)
    key: str                  # the run config's block that records the sampling ("massive")
    read: Callable[[], Tuple[List[Dict[str, Any]], Dict[str, Any]]]     # () -> (dataset rows, that block)


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
    resume: bool = False                     # continue the incomplete run `run_id`
    commit_every: Optional[int] = None       # units (one case in one presentation) between chunk commits
    commit_seconds: Optional[float] = None
    sample: Optional[Sample] = None          # instead of reading `dataset`

    def run_options(self) -> RunOptions:
        return RunOptions(dataset=self.dataset, model=self.model, runner=self.runner, run_id=self.run_id,
                          batch_size=self.batch_size, device=self.device, revision=self.revision,
                          runner_options=dict(self.runner_options), on_error="skip", resume=self.resume,
                          commit_every=self.commit_every, commit_seconds=self.commit_seconds)


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


class RobustnessJob(Job):
    """The three passes on the run loop. A unit is one (pass, case): pass k's call over cases [i, j)
    is done at k * n + j, so chunk commits, progress and resume count every presentation."""

    kind = "robustness"

    def __init__(self, opts: RobustnessOptions):
        super().__init__(opts.run_options())
        self.sample, self.sampled = opts.sample, None
        self.seed = opts.seed
        self.failed_languages: Dict[str, str] = {}
        self.not_distributions = 0

    def check(self) -> None:
        super().check()
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UsageError("--seed must be a non-negative integer, got %r" % (self.seed,))
        if self.opts.shard is not None:
            raise UsageError("--shard: a robustness run is not sharded")

    @property
    def source(self) -> str:
        return self.sample.source if self.sample is not None else super().source

    def read(self) -> List[D.Row]:
        """The DATASET file's rows, or the sample's, made before any model loads; the digest is then of
        the sampled rows as JSON lines (as `massive run` records its own)."""
        if self.sample is None:
            return super().read()
        raw, self.sampled = self.sample.read()
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in raw)
        self.dataset_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.opts = dataclasses.replace(self.opts, dataset=self.sample.name)
        rows = [D.Row(index=i, line_no=i + 1, raw=r) for i, r in enumerate(raw)]
        self.check_rows(rows)
        return rows

    def load(self, rows: List[D.Row], every: List[D.Row], runner: Any, clock: Callable[[], float]) -> None:
        if runner is None and self.sample is not None:       # MASSIVE: scored as the metamorphic harness scores
            self.opts = exact_laya(self.opts)
        super().load(rows, every, runner, clock)

    def check_rows(self, rows: List[D.Row]) -> None:
        strict.refuse_errors(self.source, [_labelled_probe(row) for row in rows])
        self.cases = plan(self.source, rows, self.seed)

    def identity(self) -> Dict[str, Any]:
        return {"robustness": {"seed": self.seed, "kinds": list(V.KINDS)}}

    def new_buffer(self) -> VariantBuffer:
        return VariantBuffer()

    def units(self) -> int:
        return len(self.cases) * len(V.KINDS)

    def restore(self, entry: Optional[Dict[str, Any]], recorder: RunRecorder) -> int:
        """Also the failed languages, the S7.14 count and every committed baseline's case id (the parent)."""
        done = super().restore(entry, recorder)
        if entry is not None:
            block = self.committed_config(entry).get("robustness") or {}
            self.failed_languages = dict(block.get("failed_languages") or {})
            self.not_distributions = int(block.get("not_a_distribution") or 0)
            rows = recorder.wh.committed_cases(recorder.run_id, ["row_index", "variant", "case_id"])
            parents = {i: c for i, v, c in zip(rows["row_index"], rows["variant"], rows["case_id"]) if v == V.KINDS[0]}
            for case in self.cases:
                case.parent = parents.get(case.row.index, case.parent)
        return done

    def plan(self) -> Iterator[Call]:
        """Pass by pass, S6.12 chunks of cases whose presented question is the same; a language that
        failed is not asked again (its cases leave the later calls)."""
        n = len(self.cases)
        for k in range(len(V.KINDS)):
            bodies = [c.variants[k].body(c.row.questions[c.qid]) for c in self.cases]
            sigs = [signature({c.qid: b}) for c, b in zip(self.cases, bodies)]
            for positions in chunks(self.cases, [None] * n, self.opts.batch_size, self.batch_form is not None, sigs):
                chunk = [self.cases[p] for p in positions if self.cases[p].language not in self.failed_languages]
                first = self.cases[positions[0]]
                yield Call([(c, k) for c in chunk], [c.row for c in chunk], {first.qid: bodies[positions[0]]},
                           k * n + positions[-1] + 1)

    def kwargs(self, call: Call) -> Dict[str, Any]:
        return {}

    def failed(self, recorder: RunRecorder, call: Call, exc: Exception, made: Dict[str, Any]) -> None:
        """A runner exception fails the call's languages; the other languages go on."""
        message = "%s: %s" % (type(exc).__name__, exc)
        for case, k in call.items:
            self.failed_languages.setdefault(case.language, message[:200])
            self._error(recorder, case, k, message, made)

    def _extra(self, case: Case, k: int) -> Dict[str, Any]:
        variant = case.variants[k]
        extra: Dict[str, Any] = {"variant": variant.kind, "slot_order": list(variant.slot_order),
                                 "presented_labels": list(variant.presented_labels)}
        if k > 0:
            extra.update(parent_case_id=case.parent, case_id=variant_case_id(case.parent or "", variant.kind))
        return extra

    def _error(self, recorder: RunRecorder, case: Case, k: int, message: str, made: Dict[str, Any]) -> None:
        buffer: VariantBuffer = recorder.buffer          # type: ignore[assignment]
        buffer.add_variant_error(case.row, message, qid=case.qid, qid_pos=0, model=self.opts.model, call=made,
                                 extra=self._extra(case, k))
        if k == 0:
            case.parent = buffer.last_case_id

    def returned(self, recorder: RunRecorder, item: Any, row: D.Row, result: Dict[str, Any],
                 made: Dict[str, Any]) -> None:
        """The presented answer read back in canonical option order (S7.14), or an error record."""
        case, k = item
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        answer = answers.get(case.qid)
        if not isinstance(answer, dict):
            return self._error(recorder, case, k, "missing answer", made)
        variant = case.variants[k]
        try:
            canonical = V.canonical_answer(answer, variant, case.keys)
        except V.NotADistribution as exc:
            self.not_distributions += 1
            return self._error(recorder, case, k, "S7.14: %s" % exc, made)
        extra = dict(self.facts(row, result, case.qid), **self._extra(case, k))
        extra["answer_json"] = answer_text(answer)
        if "logits" in extra:
            extra["logits"] = V.canonical_logits(extra["logits"], variant)
        model = self.opts.model or answered_model(result, self.info.model_id)
        recorder.add_answers(case.row, {case.qid: canonical}, model=model, call=made,
                             field="runner answer", missing=lambda pos, qid: None,
                             extra=lambda qid: extra)
        if k == 0:
            case.parent = recorder.buffer.last_case_id        # type: ignore[attr-defined]

    def config(self) -> Dict[str, Any]:
        return dict(super().config(), robustness={
            "schema": SCHEMA, "seed": self.seed, "kinds": list(V.KINDS),
            "failed_languages": dict(sorted(self.failed_languages.items())),
            "not_a_distribution": self.not_distributions, "calls": self.calls.chunks,
            "batch_size": self.opts.batch_size}, **({self.sample.key: self.sampled} if self.sample else {}))

    def settings(self) -> Dict[str, Any]:
        return dict(super().settings(), seed=self.seed)


def execute(wh: Warehouse, opts: RobustnessOptions, *, runner: Any = None,
            clock: Callable[[], float] = time.perf_counter,
            progress: Optional[Callable[[int], None]] = None,
            on_loaded: Optional[Callable[[int], None]] = None) -> RecordedRun:
    """Ask every case in its three presentations and commit one run; returns its id and counts."""
    return run_execute(wh, RobustnessJob(opts), runner=runner, clock=clock, progress=progress, on_loaded=on_loaded)
