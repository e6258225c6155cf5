"""What every log import shares: the import identity (issue 31 item 5), re-import recognition, and one
RunRecorder commit per run (decision rows are built by the recorder, never written here).

A format module yields `Rows`: a finished labelled row (state, questions, expected, language, item_id,
tags), its answers and per-qid extra decision facts, and the file:line that row came from. Errors name
that file:line; nothing is visible until the whole run has been read (the recorder's staging area).
"""
from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.core.dataset import Row
from laya_cases.core.identity import file_sha256
from laya_cases.record.ingest.blocks import Fallback
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import new_run_id, taken
from laya_cases.query.sql import connect

IMPORT_SCHEMA = "laya-cases-import/1"


@dataclass
class Imported:
    """One decided row of a log: `raw` is the labelled row, `answers` {qid: answer}, `extra` {qid: facts}."""

    path: str                       # the log file and line it came from (every message names them)
    line_no: int
    raw: Dict[str, Any]
    answers: Dict[str, Any]
    extra: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return "%s:%d" % (self.path, self.line_no)


@dataclass
class Source:
    """One run's worth of log files, described as its identity records it."""

    harness: str                    # lm-eval, lighteval, helm, inspect
    version: Optional[str]
    model: Optional[str]
    tasks: List[str]
    files: List[str]                # every file read, digested in the identity
    normalisation: Dict[str, Any]   # how scores became probabilities (e.g. {"norm": "raw"})
    notes: List[str] = field(default_factory=list)   # e.g. why calibration is unavailable
    label: str = ""                 # what the run is called in messages (the results file, the log)

    def identity(self) -> Dict[str, Any]:
        """The import identity stored in the run's settings: equal identities = the same logs, read alike."""
        return {"schema": IMPORT_SCHEMA, "harness": self.harness, "harness_version": self.version,
                "model": self.model, "tasks": sorted(self.tasks), "normalisation": self.normalisation,
                "files": {path: file_sha256(path) for path in sorted(self.files)}}


def _same_logs(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    """Re-import test: the same file digests (names may differ: a copied folder is the same logs) and the
    same normalisation."""
    return (sorted(a.get("files", {}).values()) == sorted(b.get("files", {}).values())
            and a.get("normalisation") == b.get("normalisation") and a.get("harness") == b.get("harness"))


def imported_before(wh: Warehouse, ident: Dict[str, Any]) -> Optional[str]:
    """The committed run that imported these very files with this normalisation, if any."""
    if not wh.run_ids():
        return None
    con = connect(wh)
    for run_id, settings in con.execute("SELECT run_id, settings_json FROM runs WHERE kind = 'import' "
                                        "ORDER BY run_id").fetchall():
        previous = json.loads(settings or "{}").get("import")
        if isinstance(previous, dict) and _same_logs(previous, ident):
            return run_id
    return None


@dataclass(frozen=True)
class ImportResult:
    """A run an import made, or found already made (`existing`: nothing was committed)."""

    run_id: str
    n_cases: int
    existing: bool
    notes: List[str]


#: Rows between two calls of commit_all's progress callback.
PROGRESS_EVERY = 1000


#: One run to import: its Source, its rows (a callable yielding Imported), the run id it asks for (None: a new
#: one), and optionally a column-wise reader that records the same rows into a RunRecorder, or raises
#: Fallback (the rows are then recorded one by one).
Part = Tuple[Source, Callable[[], Iterable[Imported]], Optional[str], Optional[Callable[..., None]]]


def commit_all(wh: Warehouse, parts: List[Part], progress: Optional[Callable[[int], None]] = None) -> List[ImportResult]:
    """Record each part as one run of kind `import`; every run is read into its staging area before any
    is made visible, so a bad line anywhere commits nothing. A source whose very files were imported
    before names that run instead. `progress(rows read so far, all runs)`: every PROGRESS_EVERY rows (or
    block) and once at the end (the CLI's bar)."""
    done = 0
    out: List[Optional[ImportResult]] = []
    staged: List[Tuple[int, RunRecorder, Source, Dict[str, Any]]] = []
    with ExitStack() as stack:
        for source, rows, run_id, columnwise in parts:
            ident = source.identity()
            before = imported_before(wh, ident)
            if before is not None:
                out.append(ImportResult(before, 0, True, ["%s was already imported as run %s (same files, same "
                                                          "normalisation); nothing committed" % (source.label, before)]))
                continue
            run_id = new_run_id() if run_id is None else run_id
            if wh.has_run(run_id) or any(r.run_id == run_id for _, r, _, _ in staged):
                raise taken(run_id, wh.root)
            recorder = None if columnwise is None else _columnwise(stack, wh, run_id, source, columnwise, progress, done)
            if recorder is None:
                recorder = RunRecorder(wh, run_id, source.label)
                stack.enter_context(recorder.staging())
                for index, item in enumerate(rows()):
                    _record(recorder, index, item)
                    recorder.flush()
                    if progress is not None and (done + index + 1) % PROGRESS_EVERY == 0:
                        progress(done + index + 1)
            done += recorder.n_rows
            staged.append((len(out), recorder, source, ident))
            out.append(None)
        for slot, recorder, source, ident in staged:
            recorded: RecordedRun = recorder.commit(
                kind="import", dataset="%s:%s" % (source.harness, ",".join(sorted(source.tasks))),
                dataset_sha256=None, runner=source.harness, model_id=source.model,
                config={"import": {"harness": source.harness}},
                settings={"import": ident, "import_notes": source.notes})
            out[slot] = ImportResult(recorded.run_id, recorded.n_cases, False, list(source.notes))
    if progress is not None:
        progress(done)
    return [r for r in out if r is not None]


def _columnwise(stack: ExitStack, wh: Warehouse, run_id: str, source: Source, record: Callable[..., None],
                progress: Optional[Callable[[int], None]], done: int) -> Optional[RunRecorder]:
    """The run recorded column-wise, its staging area kept open in `stack`; None when the reader cannot
    read it as the per-row path does (Fallback) or meets an error (the per-row path then names it)."""
    recorder = RunRecorder(wh, run_id, source.label)
    try:
        with ExitStack() as inner:
            inner.enter_context(recorder.staging())
            record(recorder, None if progress is None else (lambda n: progress(done + n)))
            stack.enter_context(inner.pop_all())
            return recorder
    except (Fallback, UsageError):
        return None


def _record(recorder: RunRecorder, index: int, item: Imported) -> None:
    recorder.source = item.path                            # the recorder's messages name this row's own file
    row = Row(index=index, line_no=item.line_no, raw=item.raw, tags=tuple(str(t) for t in item.raw.get("tags") or ()))
    recorder.note_row(row)

    def missing(_pos: int, qid: str) -> None:              # every imported row carries its answer
        raise UsageError("%s has no answer for %r" % (item.where, qid))

    recorder.add_answers(row, item.answers, model=None, call={"call_id": index, "chunk_size": 1, "returned": True},
                         field="answers", missing=missing, extra=lambda qid: dict(item.extra.get(qid) or {}))


def read_json(path: str) -> Any:
    """A whole JSON file, or a one-line UsageError naming it."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        raise UsageError("%s cannot be read: %s" % (path, exc)) from None
    except ValueError as exc:
        raise UsageError("%s is not valid JSON: %s" % (path, exc)) from None
