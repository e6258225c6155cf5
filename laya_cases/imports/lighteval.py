"""lighteval `--save-details` output -> runs: one run per details folder (one model, one date), holding every
task whose details_<task>|<fewshot>_<date>.parquet lies in it (docs/imports.md, "lighteval").

Read from the harness's own code (lighteval 0.13.0): `logging/evaluation_tracker.py` writes, per task, one
Parquet row per doc with the structs `doc` (tasks/requests.py Doc), `metric` (metric name -> per-doc value)
and `model_response` (models/model_output.py ModelResponse), under `<out>/details/<model>/<date>/`, and
`results_<date>.json` under `<out>/results/<model>/`. `metrics/metrics_sample.py` LoglikelihoodAcc scores a
multiple-choice doc as np.argmax of the choices' logprobs (first maximum on ties), each divided by
len(choice text) for `acc_norm` (LogProbCharNorm, the text as logged, its leading space counted);
NormalizedMultiChoiceProbability is exp(logprob_gold) / sum exp(logprobs). sql/imports/lighteval_details.sql
flattens a file; this module checks each value and turns the row into a decision.
"""
from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

import duckdb

from laya_cases.core.errors import UsageError, shorten
from laya_cases.imports.common import Imported, Source, read_json
from laya_cases.imports.lmeval_rows import Task
from laya_cases.query import sql as sqlfiles

NORMS = {"raw": "acc", "chars": "acc_norm"}      # --norm -> the lighteval metric it reproduces
_DETAILS = re.compile(r"^details_(?P<task>.+)_(?P<date>[^_]+)\.parquet$")
_SQL = "imports/lighteval_details.sql"
#: What the query reads from each struct; lighteval 0.13 writes every field of its dataclasses.
REQUIRED = {"doc": ("query", "original_query", "choices", "gold_index", "specific", "id", "task_name",
                    "sampling_methods"),
            "metric": (),
            "model_response": ("logprobs", "text", "text_post_processed")}
LANGUAGE_FIELDS = ("language", "lang", "locale")
_TOL = 1e-9                                       # normalized_mc_prob: numpy's exp/sum against our softmax


def is_details(name: str) -> bool:
    return bool(_DETAILS.match(os.path.basename(name)))


def details_sets(path: str) -> List[Tuple[str, List[str]]]:
    """(folder, its details files) for a details file (its whole folder is the run) or every folder under
    `path` that holds details files, in path order."""
    if os.path.isfile(path):
        if not is_details(path):
            raise UsageError("%s is not a lighteval details_<task>|<fewshot>_<date>.parquet" % path)
        path = os.path.dirname(path) or "."
    found: Dict[str, List[str]] = {}
    for folder, _, names in os.walk(path):
        for name in names:
            if is_details(name):
                found.setdefault(folder, []).append(os.path.join(folder, name))
    if not found:
        raise UsageError("%s holds no lighteval details_<task>|<fewshot>_<date>.parquet (run lighteval with "
                         "--save-details)" % path)
    return [(folder, sorted(found[folder])) for folder in sorted(found)]


def _results_file(folder: str) -> Optional[str]:
    """<out>/results/<model>/results_<date>.json for <out>/details/<model>/<date>/, when it is there."""
    parts = os.path.normpath(os.path.abspath(folder)).split(os.sep)
    if "details" not in parts[:-1]:
        return None
    at = len(parts) - 2 - parts[:-1][::-1].index("details")
    guess = os.sep.join(parts[:at] + ["results"] + parts[at + 1:-1] + ["results_%s.json" % parts[-1]])
    return guess if os.path.isfile(guess) else None


def _model_from_path(folder: str) -> Optional[str]:
    parts = os.path.normpath(os.path.abspath(folder)).split(os.sep)
    if "details" not in parts[:-1]:
        return None
    at = len(parts) - 2 - parts[:-1][::-1].index("details")
    return "/".join(parts[at + 1:-1]) or None


class Details:
    """One details folder: its Source (identity) and the rows of its files."""

    def __init__(self, folder: str, files: List[str], norm: str, item_field: Optional[str]):
        if norm not in NORMS:
            raise UsageError("--norm must be one of %s for lighteval (it logs no per-byte metric), got %r"
                             % (", ".join(NORMS), norm))
        self.folder, self.files, self.norm, self.item_field = folder, files, norm, item_field
        self.tasks = {_DETAILS.match(os.path.basename(f)).group("task"): f for f in files}
        results = _results_file(folder)
        model, sha = _model_from_path(folder), None
        if results is not None:
            general = (read_json(results) or {}).get("config_general") or {}
            if isinstance(general.get("model_name"), str) and general["model_name"]:
                model = general["model_name"]
            if isinstance(general.get("lighteval_sha"), str) and general["lighteval_sha"] not in ("", "?"):
                sha = general["lighteval_sha"]
        self.source = Source(harness="lighteval", version=sha, model=model, tasks=sorted(self.tasks),
                             files=sorted(files) + ([results] if results else []),
                             normalisation={"norm": norm, "metric": NORMS[norm],
                                            "item_id": "doc.specific." + item_field if item_field else "doc.id"},
                             label=folder)

    def rows(self) -> Iterator[Imported]:
        con = duckdb.connect()
        try:
            for task_name in sorted(self.tasks):
                path = self.tasks[task_name]
                for row in _read(con, path):
                    yield self._row(row, path)
        finally:
            con.close()

    def _row(self, row: Dict[str, Any], path: str) -> Imported:
        where = "%s:%d" % (path, row["row_no"])
        methods = row.get("sampling_methods")
        if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
            raise UsageError("%s field 'doc.sampling_methods' must be a list of names" % where)
        if "LOGPROBS" in methods:
            return choice_row(row, self.norm, path, self.item_field)
        if "GENERATIVE" in methods:
            return generated_row(row, path, self.item_field)
        raise UsageError("%s field 'doc.sampling_methods' is %s: only LOGPROBS (multiple choice) and GENERATIVE "
                         "docs are decisions (docs/imports.md)" % (where, methods))


def _read(con: duckdb.DuckDBPyConnection, path: str) -> List[Dict[str, Any]]:
    """The file through sql/imports/lighteval_details.sql, after checking it has the structs it reads."""
    try:
        fields = _struct_fields(con, path)
    except duckdb.Error as exc:
        raise UsageError("%s is not a readable Parquet file: %s" % (path, shorten(str(exc).splitlines()[0], 120))) from None
    for struct, keys in REQUIRED.items():
        if struct not in fields:
            raise UsageError("%s:1 field '%s' is missing (is it a lighteval details file?)" % (path, struct))
        for key in keys:
            if key not in fields.get(struct, ()):
                raise UsageError("%s:1 field '%s.%s' is missing" % (path, struct, key))
    try:
        return sqlfiles.rows(sqlfiles.query(con, _SQL, {"path": path}))
    except duckdb.Error as exc:
        raise UsageError("%s cannot be read as lighteval details: %s" % (path, shorten(str(exc).splitlines()[0], 120))) from None


def _struct_fields(con: duckdb.DuckDBPyConnection, path: str) -> Dict[str, List[str]]:
    """struct column -> its field names (DuckDB's type of each top-level column)."""
    out = {}
    for name, type_ in con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet($p))",
                                   {"p": path}).fetchall():
        out[name] = _top_fields(type_) if type_.startswith("STRUCT(") else []
    return out


def _top_fields(type_: str) -> List[str]:
    """The field names of a DuckDB STRUCT(...) type text, top level only."""
    body, names, depth, start = type_[len("STRUCT("):-1], [], 0, 0
    for i, ch in enumerate(body + ","):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            part = body[start:i].strip()
            if part:
                name = part[1:part.index('"', 1)] if part.startswith('"') else part.split(" ", 1)[0]
                names.append(name)
            start = i + 1
    return names


# ---------------------------------------------------------------------------- rows
def _json(text: Any, where: str, field: str) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        raise UsageError("%s field %r is not JSON" % (where, field)) from None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _metrics(row: Dict[str, Any], where: str) -> Dict[str, Any]:
    metric = _json(row.get("metric_json"), where, "metric")
    if not isinstance(metric, dict):
        raise UsageError("%s field 'metric' must be a struct of per-doc metrics" % where)
    return metric


def _softmax(scores: List[float]) -> List[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _gold(row: Dict[str, Any], n: int, where: str) -> List[int]:
    gold = _json(row.get("gold_json"), where, "doc.gold_index")
    golds = gold if isinstance(gold, list) else [gold]
    if not golds or not all(isinstance(g, int) and not isinstance(g, bool) and 0 <= g < n for g in golds):
        raise UsageError("%s field 'doc.gold_index' must be an index (or a list of indices) of the %d choices, got %s"
                         % (where, n, shorten(repr(gold), 60)))
    return golds


def choice_row(row: Dict[str, Any], norm: str, path: str, item_field: Optional[str]) -> Imported:
    """A LOGPROBS doc: a `choice` decision over the choice texts, probabilities = softmax of the (per-character
    under --norm chars) logprobs; lighteval's own per-doc acc / acc_norm and normalized_mc_prob are checked."""
    where = "%s:%d" % (path, row["row_no"])
    choices = row.get("choices")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
        raise UsageError("%s field 'doc.choices' must be a non-empty list of texts" % where)
    lls = row.get("logprobs")
    if not isinstance(lls, list) or not all(_number(x) for x in lls):
        raise UsageError("%s field 'model_response.logprobs' must be a list of numbers, got %s"
                         % (where, shorten(repr(lls), 60)))
    n = len(choices)
    if len(lls) not in (n, 2 * n):                       # 2n: PMI, the unconditioned half last
        raise UsageError("%s field 'model_response.logprobs' has %d values for %d choices" % (where, len(lls), n))
    lls = [float(x) for x in lls[:n]]
    gold = _gold(row, n, where)
    scores = [ll / len(c) if norm == "chars" and c else ll for ll, c in zip(lls, choices)]
    pred = scores.index(max(scores))
    probs = _softmax(scores)
    _check(_metrics(row, where), norm, scores, pred, gold, lls, probs, where)
    stripped = [c.strip() for c in choices]
    plain = len(set(stripped)) == n and all(stripped)
    labels = stripped if plain else [str(i) for i in range(n)]
    task, language, qid = _task(row, where)
    body = {"type": "choice", "instructions": qid, "criteria": labels if plain else dict(zip(labels, choices))}
    expected = labels[gold[0]] if len(gold) == 1 else [labels[g] for g in gold]   # a list: unscored (S2.9)
    answer = {"type": "choice", "choice": labels[pred], "probabilities": dict(zip(labels, probs)),
              "answer_confidence": max(probs)}
    raw = _labelled(row, task, qid, body, expected, language, item_field, where)
    return Imported(path, row["row_no"], raw, {qid: answer}, {qid: {"logits": lls}})


def _check(metric: Dict[str, Any], norm: str, scores: List[float], pred: int, gold: List[int], lls: List[float],
           probs: List[float], where: str) -> None:
    """Our decision must be lighteval's: the metric --norm reproduces (a doc with an exact tie excepted: which
    tied option wins is argmax's order, not a decision) and, under raw, normalized_mc_prob = P(gold)."""
    name = NORMS[norm]
    logged = metric.get(name)
    if logged is not None and not _number(logged):
        raise UsageError("%s field 'metric.%s' must be a number, got %s" % (where, name, shorten(repr(logged), 40)))
    if logged is not None and scores.count(max(scores)) == 1:
        ours = 1.0 if pred in gold else 0.0
        if float(logged) != ours:
            raise UsageError("%s field 'metric.%s': lighteval logged %r, the import decides %r (--norm %s)"
                             % (where, name, logged, ours, norm))
    theirs = metric.get("normalized_mc_prob")
    if norm == "raw" and _number(theirs) and theirs > 0 and all(math.exp(x) > 0 for x in lls):
        ours = max(probs[g] for g in gold)
        if abs(ours - theirs) > _TOL * max(1.0, abs(theirs)):
            raise UsageError("%s field 'metric.normalized_mc_prob': lighteval logged %r, the softmax of the "
                             "logprobs gives %r" % (where, theirs, ours))


def generated_row(row: Dict[str, Any], path: str, item_field: Optional[str]) -> Imported:
    """A GENERATIVE doc: a `noul` decision whose P(true) is the logged metric (`em` first), gold true, and no
    confidence, as lm-eval's generate_until."""
    where = "%s:%d" % (path, row["row_no"])
    metric = _metrics(row, where)
    names = [m for m, v in metric.items() if _number(v)]
    if not names:
        raise UsageError("%s field 'metric' has no numeric per-doc metric to score the generation by" % where)
    name = next((m for m in ("em", "exact_match") if m in names), names[0])
    texts = row.get("texts")
    if not isinstance(texts, list) or not texts or not isinstance(texts[0], str):
        raise UsageError("%s field 'model_response.text' must hold the generation" % where)
    task, language, qid = _task(row, where)
    body = {"type": "noul", "instructions": "%s (%s)" % (qid, name)}
    answer = {"type": "noul", "noul": float(metric[name]), "metric": name, "response": texts[0]}
    raw = _labelled(row, task, qid, body, True, language, item_field, where)
    no_confidence = {"confidence": None, "confidence_source": None, "gate_confidence": None}
    return Imported(path, row["row_no"], raw, {qid: answer}, {qid: no_confidence})


def _task(row: Dict[str, Any], where: str) -> Tuple[str, Optional[str], str]:
    """(task name as logged, language, qid): the language from doc.specific, else from the task name
    (lm-eval's multilingual names); the qid is the name without its few-shot count and language."""
    name = row.get("task_name")
    if not isinstance(name, str) or not name:
        raise UsageError("%s field 'doc.task_name' must be the task's name" % where)
    specific = _json(row.get("specific_json"), where, "doc.specific")
    language, qid = Task(name.split("|")[0], {}).row_language(
        {k: specific.get(k) for k in LANGUAGE_FIELDS} if isinstance(specific, dict) else None)
    return name, language, qid


def _labelled(row: Dict[str, Any], task: str, qid: str, body: Dict[str, Any], expected: Any,
              language: Optional[str], item_field: Optional[str], where: str) -> Dict[str, Any]:
    query = row.get("original_query") or row.get("query")
    if not isinstance(query, str):
        raise UsageError("%s field 'doc.query' must be text" % where)
    if item_field is None:
        item = row.get("doc_id")
        if not isinstance(item, str) or not item:
            raise UsageError("%s field 'doc.id' must be the doc's id" % where)
    else:
        specific = _json(row.get("specific_json"), where, "doc.specific")
        item = specific.get(item_field) if isinstance(specific, dict) else None
        if item is None or isinstance(item, (dict, list)):
            raise UsageError("%s field 'doc.specific' has no %r (--item-id)" % (where, item_field))
    raw = {"state": query, "questions": {qid: body}, "expected": {qid: expected}, "tags": [task],
           "item_id": str(item)}
    if language is not None:
        raw["language"] = language
    return raw
