"""`laya-cases import`: other harnesses' logs become runs (issue 31, docs/imports.md).

One module per source format turns its log into ordinary labelled rows with answers; common.py records
them through the one RunRecorder. `detect` names the format of a path when `--format` is not given;
`harness` and `laya-evals` are the existing harness documents (laya_cases/harness/massive/document.py).
"""
from __future__ import annotations

import os
from typing import Callable, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.harness.massive import document
from laya_cases.imports import helm, inspect_log, lighteval, lmeval, lmeval_columns
from laya_cases.imports.common import ImportResult, commit_all

FORMATS = ("lm-eval", "inspect", "harness", "laya-evals", "lighteval", "helm")


def detect(path: str) -> str:
    """The format of `path` from its files: a HELM run folder, lighteval details, lm-eval results/samples, an
    inspect log, else a harness document."""
    if not os.path.exists(path):
        raise UsageError("%s: no such file or folder" % path)
    if os.path.isdir(path):
        names = [n for _, _, files in os.walk(path) for n in files]
        if helm.STATE in names:
            return "helm"
        if any(lighteval.is_details(n) for n in names):   # before lm-eval: lighteval writes results_<date>.json too
            return "lighteval"
        if any(lmeval.is_results(n) for n in names):
            return "lm-eval"
        if any(n.endswith(".eval") for n in names):
            return "inspect"
        raise UsageError("%s: no HELM scenario_state.json, lighteval details, lm-eval results_<date>.json or inspect "
                         ".eval log in it; name the format "
                         "with --format %s" % (path, "|".join(FORMATS)))
    name = os.path.basename(path)
    if helm.is_run_file(name):
        return "helm"
    if lighteval.is_details(name):
        return "lighteval"
    if lmeval.is_results(name) or (name.startswith("samples_") and name.endswith(".jsonl")):
        return "lm-eval"
    if name.endswith(".eval") or (name.endswith(".json") and _inspect_json(path)):
        return "inspect"
    return "harness"


def _inspect_json(path: str) -> bool:
    """An inspect JSON log opens with its `version`, `status` and `eval` header (a harness document has
    `cases`); only the first 64 KiB are looked at."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return head.lstrip().startswith("{") and '"status":' in head and '"eval":' in head


def import_path(wh, path: str, fmt: Optional[str] = None, run_id: Optional[str] = None, norm: str = "raw",
                item_id: Optional[str] = None, progress: Optional[Callable[[int], None]] = None) -> List[ImportResult]:
    """Import the logs at `path` as runs; one ImportResult per run (an already-imported set names its run).
    Several runs from one path get ids `<run_id>-1`, `<run_id>-2`, ... when `run_id` is given.
    `progress(rows read)`: see common.commit_all (harness documents do not call it)."""
    fmt = detect(path) if fmt is None else fmt
    if fmt not in FORMATS:
        raise UsageError("--format must be one of %s, got %r" % (", ".join(FORMATS), fmt))
    if fmt in ("harness", "laya-evals"):
        recorded = document.import_document(wh, path, run_id)
        return [ImportResult(recorded.run_id, recorded.n_cases, False, [])]
    if fmt == "lm-eval":
        sets = [lmeval.Results(p, norm, item_id) for p in lmeval.results_files(path)]
    elif fmt == "helm":
        sets = helm.runs(path, norm, item_id)
    elif fmt == "lighteval":
        sets = [lighteval.Details(folder, files, norm, item_id) for folder, files in lighteval.details_sets(path)]
    else:
        sets = inspect_log.logs(path)
    ids = [run_id if run_id is None or len(sets) == 1 else "%s-%d" % (run_id, i + 1) for i in range(len(sets))]
    fast = (lambda one: lmeval_columns.Columnwise(one).record) if fmt == "lm-eval" else (lambda one: None)
    return commit_all(wh, [(one.source, one.rows, rid, fast(one)) for one, rid in zip(sets, ids)], progress)
