"""`laya-cases relevance run`: one committed run per (model, language) through `laya_cases.run.execute.execute`.

Per language the manifest's rows become an S1 dataset (state {question, sentence}, one noul question
`relevant`, gold = the label is the positive one, `source_item_id` the language-neutral id and `item_id` =
<language>/<source_item_id>), written once under
<warehouse>/relevance/datasets/ and named by its SHA-256, which is the run's benchmark SHA-256:
runs are comparable only when it is equal (S8.10). The run id is <prefix>-<language>; a language
whose run is already committed with the same benchmark SHA-256, model and prompt is not redone, so
re-running an interrupted benchmark finishes only what is missing.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from laya_cases.core import bundled
from laya_cases.core.errors import UsageError, shorten
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.runners import hf_common as H
from laya_cases.runners import registry
from laya_cases.runners.hf_base import CausalLMRunner
from laya_cases.runners.minilm_relevance import MiniLMRelevanceRunner
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import validate_run_id
from laya_cases.harness.relevance import manifest as M
from laya_cases.harness.relevance.facts import Measured

MINILM_NAMES = ("minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
MINILM_RUNNER = "minilm-relevance"
SEED = 0


@dataclass
class BenchOptions:
    data: Optional[str] = None
    manifest: Optional[str] = None
    data_root: Optional[str] = None
    model: str = "minilm"
    runner: Optional[str] = None
    name: Optional[str] = None
    langs: Optional[List[str]] = None
    template: Optional[str] = None
    run_id: Optional[str] = None          # the prefix: runs are <prefix>-<language>
    limit: Optional[int] = None           # first N rows of each language (file order)
    batch_size: int = 16
    device: Optional[str] = None
    revision: Optional[str] = None
    commit_every: Optional[int] = None    # dataset rows between chunk commits (laya-cases run --commit-every)
    runner_options: Dict[str, Any] = dataclasses.field(default_factory=dict)   # --runner-option KEY=VALUE


@dataclass
class Pair:
    language: str
    run_id: str
    dataset: str
    benchmark_sha256: str
    n_items: int
    status: str = "pending"               # pending | resume (incomplete run) | done (committed before) | committed


def slug(text: str) -> str:
    tail = Path(text.rstrip("/")).name or text
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-.") or "model"


def _runner_choice(opts: BenchOptions):
    """(runner name or None, model argument, class)."""
    if opts.runner is None and opts.model in MINILM_NAMES:
        if MINILM_RUNNER not in registry.names():
            registry.register(MINILM_RUNNER, MiniLMRelevanceRunner)
        return MINILM_RUNNER, None, registry.get_class(MINILM_RUNNER)
    name, cls, arg = registry.resolve(opts.model, opts.runner)
    return name, (opts.model if arg is None and opts.runner is None else arg), cls


def default_template() -> str:
    """The benchmark's own prompt file (S8.2: one template for every model), shipped as data/relevance/prompt.txt:
    a run that prompts without --template reads it, so two LM runs share a prompt and its recorded SHA-256."""
    return str(bundled.path("relevance", "prompt.txt"))


def _check_runner(opts: BenchOptions, name: str, cls: Any) -> Optional[str]:
    """Refuse what the runner cannot do; returns the prompt file it reads (None: it reads no prompt)."""
    if "noul" not in cls.capabilities.question_types:
        raise UsageError("--model %s: the %s runner does not answer yes/no (noul) questions" % (opts.model, name))
    prompted = isinstance(cls, type) and issubclass(cls, CausalLMRunner)
    if opts.template is not None and not prompted:
        raise UsageError("--template: the %s runner reads no prompt" % name)
    if not prompted:
        return None
    template = opts.template if opts.template is not None else default_template()
    try:
        H.read_template(template, H.YESNO_TEMPLATE)
    except ValueError as exc:
        raise UsageError("--template: %s" % exc) from None
    return template


def encode_dataset(rows: List[Dict[str, Any]]) -> tuple:
    """(bytes, SHA-256) of a language's S1 dataset: canonical JSON lines, sorted keys, UTF-8."""
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode("utf-8")
    return data, hashlib.sha256(data).hexdigest()


def dataset_path(wh: Warehouse, bench: str, language: str, sha: str) -> Path:
    return Path(wh.root) / "relevance" / "datasets" / ("%s-%s-%s.jsonl" % (slug(bench), slug(language), sha[:16]))


def write_dataset(path: Path, data: bytes) -> None:
    """Content-addressed: written once (as .tmp, then renamed), kept for a resumed or re-run pair."""
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)


def committed_facts(wh: Warehouse, run_id: str) -> Dict[str, Any]:
    """The relevance block a committed run's settings recorded (what a re-run must match)."""
    facts = json.loads(wh.run_row(run_id).get("settings_json") or "{}").get("relevance")
    return facts if isinstance(facts, dict) else {}


def _chunk_options(pair: Pair, commit_every: Optional[int]) -> Dict[str, Any]:
    """RunOptions(resume=True) for a pair interrupted midway, and --commit-every (laya_cases.run.execute's chunked
    commits, when this laya-cases has them)."""
    known = {f.name for f in dataclasses.fields(RunOptions)}
    out: Dict[str, Any] = {}
    if commit_every is not None:
        if "commit_every" not in known:
            raise UsageError("--commit-every: this laya-cases commits a run at its end only")
        out["commit_every"] = commit_every
    if pair.status == "resume":
        if "resume" not in known:
            raise UsageError("run %s is incomplete and this laya-cases cannot resume it" % pair.run_id)
        out["resume"] = True
    return out


def plan(wh: Warehouse, opts: BenchOptions, model_name: str, prompt_sha: Optional[str]):
    """Every requested language read and its run id checked, then the datasets written, before any model loads."""
    bench = M.open_benchmark(opts.data, opts.manifest, opts.data_root)
    prefix = opts.run_id or "rel-%s" % slug(model_name)
    pairs, data = [], []
    for lang in bench.pick(opts.langs):             # every language read and checked before anything is written
        run_id = validate_run_id("%s-%s" % (prefix, slug(lang.language)))
        rows = M.dataset_rows(lang, bench.instructions, opts.limit)
        encoded, sha = encode_dataset(rows)
        data.append(encoded)
        pair = Pair(lang.language, run_id, str(dataset_path(wh, bench.name, lang.language, sha)), sha, len(rows))
        state = wh.run_state(run_id)
        if state == "incomplete":
            pair.status = "resume"
        elif state == "complete":
            done = committed_facts(wh, run_id)
            same = (done.get("benchmark_sha256"), done.get("model_name"), done.get("prompt_sha256"))
            if same != (sha, model_name, prompt_sha) and not (prompt_sha is None and same[:2] == (sha, model_name)):
                raise UsageError("run %s exists for another benchmark, model or prompt (%s); pass another --run-id"
                                 % (run_id, shorten(json.dumps(dict(zip(("benchmark_sha256", "model_name",
                                                                        "prompt_sha256"), same))), 200)))
            pair.status = "done"
        pairs.append(pair)
    for pair, encoded in zip(pairs, data):
        if pair.status != "done":
            write_dataset(Path(pair.dataset), encoded)
    return bench, pairs


def run_benchmark(wh: Warehouse, opts: BenchOptions, *, note: Callable[[str], None] = lambda s: None,
                  progress: Optional[Callable[[int], None]] = None) -> List[Pair]:
    """Run the model over every pending language; returns each pair with its status."""
    if opts.limit is not None and opts.limit < 1:
        raise UsageError("--limit must be >= 1, got %d" % opts.limit)
    name, model_arg, cls = _runner_choice(opts)
    template = _check_runner(opts, name, cls)
    model_name = opts.name or (opts.model if opts.runner is None else "%s-%s" % (slug(opts.model), name))
    prompt_sha = None if template is None else H.read_template(template, H.YESNO_TEMPLATE)[1]
    bench, pairs = plan(wh, opts, model_name, prompt_sha)
    pending = [p for p in pairs if p.status in ("pending", "resume")]
    for p in pairs:
        if p.status == "done":
            note("%s: run %s is committed, not redone" % (p.language, p.run_id))
    if not pending:
        return pairs
    extra = dict(opts.runner_options)
    if template is not None:
        extra["prompt"] = template
    inner = registry.load(model_arg, name, device=opts.device, revision=opts.revision,
                          batch_size=opts.batch_size, **extra)
    for p in pending:
        facts = {"benchmark": bench.name, "manifest_sha256": bench.sha256, "language": p.language,
                 "model_name": model_name, "model": opts.model, "runner_requested": opts.runner,
                 "benchmark_sha256": p.benchmark_sha256, "limit": opts.limit, "batch_size": opts.batch_size,
                 "seed": SEED, "run_name": p.run_id, "n_items_planned": p.n_items,
                 "runner_options": dict(opts.runner_options)}
        measured = Measured(inner, facts)
        note("%s: %d items -> run %s%s" % (p.language, p.n_items, p.run_id,
                                            " (resuming its committed chunks)" if p.status == "resume" else ""))
        execute(wh, RunOptions(dataset=p.dataset, model=model_name, batch_size=opts.batch_size, run_id=p.run_id,
                               device=opts.device, revision=opts.revision, **_chunk_options(p, opts.commit_every)),
                runner=measured, progress=progress, on_loaded=measured.install)
        p.status = "committed"
    return pairs
