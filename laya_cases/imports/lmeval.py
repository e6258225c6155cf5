"""lm-evaluation-harness `--log_samples` output -> runs: one run per results_<date>.json (one model),
holding every task whose samples_<task>_<date>.jsonl lies beside it (docs/imports.md, "lm-eval").

The results file names the model, the harness version and each task's config (output type, target
delimiter); each samples line becomes one row through lmeval_rows.py.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.imports.common import Imported, Source, read_json
from laya_cases.imports.lmeval_rows import NORMS, Task, choice_row, generated_row

_RESULTS = re.compile(r"^results_(?P<date>.+)\.json$")
_CHOICE_TYPES = ("multiple_choice",)
_GENERATIVE = ("generate_until",)


def is_results(name: str) -> bool:
    return bool(_RESULTS.match(os.path.basename(name)))


def results_files(path: str) -> List[str]:
    """Every results_<date>.json at or under `path` (a results file, a samples file, or a folder)."""
    if os.path.isfile(path):
        if is_results(path):
            return [path]
        folder, name = os.path.split(path)
        date = re.match(r"^samples_.+_(?P<date>[^_]+)\.jsonl$", name)
        guess = os.path.join(folder, "results_%s.json" % date.group("date")) if date else ""
        if os.path.isfile(guess):
            return [guess]
        raise UsageError("%s: no results_<date>.json beside it names the model (lm-eval writes both)" % path)
    found = sorted(os.path.join(d, n) for d, _, names in os.walk(path) for n in names if is_results(n))
    if not found:
        raise UsageError("%s holds no lm-eval results_<date>.json" % path)
    return found


def _samples(results: str, tasks: List[str]) -> Dict[str, str]:
    """task -> samples file of the same date in the results file's folder."""
    folder = os.path.dirname(results) or "."
    date = _RESULTS.match(os.path.basename(results)).group("date")
    out = {}
    for task in tasks:
        name = os.path.join(folder, "samples_%s_%s.jsonl" % (task, date))
        if os.path.isfile(name):
            out[task] = name
    if not out:
        raise UsageError("%s: no samples_<task>_%s.jsonl beside it (run lm-eval with --log_samples)" % (results, date))
    return out


def _model(doc: Dict[str, Any]) -> Optional[str]:
    name = doc.get("model_name")
    if isinstance(name, str) and name:
        return name
    args = (doc.get("config") or {}).get("model_args")
    if isinstance(args, dict) and isinstance(args.get("pretrained"), str):
        return args["pretrained"]
    return args if isinstance(args, str) and args else None


class Results:
    """One results file: its Source (identity) and the rows of its samples files."""

    def __init__(self, path: str, norm: str, item_field: Optional[str]):
        if norm not in NORMS:
            raise UsageError("--norm must be one of %s, got %r" % (", ".join(NORMS), norm))
        doc = read_json(path)
        configs = doc.get("configs") if isinstance(doc, dict) else None
        if not isinstance(configs, dict) or not configs:
            raise UsageError("%s field 'configs' must name the tasks (is it an lm-eval results file?)" % path)
        self.path, self.norm, self.item_field = path, norm, item_field
        self.samples = _samples(path, sorted(configs))
        self.tasks = {t: Task(t, configs[t] if isinstance(configs[t], dict) else {}) for t in self.samples}
        self.source = Source(harness="lm-eval", version=doc.get("lm_eval_version"), model=_model(doc),
                             tasks=sorted(self.samples), files=[path] + sorted(self.samples.values()),
                             normalisation={"norm": norm, "metric": NORMS[norm],
                                            "item_id": item_field or "doc_id"}, label=path)

    def rows(self) -> Iterator[Imported]:
        for task_name in sorted(self.samples):
            task, path = self.tasks[task_name], self.samples[task_name]
            for line_no, sample in _lines(path):
                yield self._row(task, sample, path, line_no)

    def _row(self, task: Task, sample: Any, path: str, line_no: int) -> Imported:
        if not isinstance(sample, dict):
            raise UsageError("%s:%d must be an object, got %s" % (path, line_no, type(sample).__name__))
        kind = task.output_type or _guess(sample)
        if kind in _CHOICE_TYPES:
            return choice_row(task, sample, self.norm, path, line_no, self.item_field)
        if kind in _GENERATIVE:
            return generated_row(task, sample, path, line_no, self.item_field)
        raise UsageError("%s:%d task %s has output_type %r: only multiple_choice and generate_until docs are "
                         "decisions (docs/imports.md)" % (path, line_no, task.name, kind))


def _guess(sample: Dict[str, Any]) -> Optional[str]:
    resps = sample.get("filtered_resps")
    if isinstance(resps, list) and resps and all(isinstance(r, list) and len(r) == 2 for r in resps):
        return "multiple_choice"
    return "generate_until" if isinstance(resps, list) else None


def _lines(path: str) -> Iterator[Any]:
    """(line_no, parsed JSON) of every non-blank line; a bad line is one message naming file:line."""
    loads = json.loads
    try:
        with open(path, "r", encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    value = loads(line)
                except ValueError as exc:
                    raise UsageError("%s:%d is not valid JSON: %s" % (path, line_no, shorten(str(exc), 120))) from None
                yield line_no, value
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError("%s cannot be read: %s" % (path, exc)) from None
