"""The harness JSON document (S7.7): export a run as it, import one (ours or a laya-evals report) as a run.

Export recomputes everything from the store: `config` (the run's checkpoint settings and the
`massive` harness parameters, S7.8), `report` per language and `summary` (metrics.py, the SQL of
sql/massive/), and `cases` (one S7.7 record per decision, unrounded, plus what laya-cases adds:
item_id, logits, temperature_clamped, temperature_unclamped, probabilities, latency_ms). Before
writing, the harness's own re-derivation check runs: |mean(correct) - accuracy| < 5e-5 per language.

Import reads such a document (or the reference's, whose cases lack the additions, and may lack `lang`
and `index`: with_positions takes them from the report's languages and the cases' order) and records each
case as a labelled row with its answer, through the same RunRecorder as `ingest`: state, the
`intent` choice question (instructions, options with their texts), the gold label, language and
item_id; the answer is the predicted label with its confidence (and the probabilities a case
carries); temperatures, logits and the state are stored as decision facts. Every bad field is one
line naming the case and field, exit 2, and nothing is committed; so is a document that contradicts
itself (a case's `correct` against its indices, a report number against its cases: import_checks.py).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import duckdb

from laya_cases.core.errors import UsageError, shorten
from laya_cases.core.dataset import Row
from laya_cases.record.recorder import RecordedRun, RunRecorder
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import check_free, new_run_id
from laya_cases.harness.massive import import_checks, metrics
from laya_cases.query.sql import connect

DOCUMENT = "laya-cases-massive-document/1"
RECHECK_TOLERANCE = 5e-5
_CASES = ("SELECT language_key, row_index, item_id, state_json, instructions, options, option_texts, "
          "json_extract_string(expected_json, '$'), predicted, probabilities, confidence, correct, temperature, "
          "temperature_clamped, temperature_unclamped, logits, call_ms / chunk_size "
          "FROM cases WHERE run_id = ? AND language_key IS NOT NULL AND question_type = 'choice' "
          "ORDER BY row_index, qid_pos")


def _index(options: List[str], label: Optional[str]) -> Optional[int]:
    return options.index(label) if label in options else None


def cases(con: duckdb.DuckDBPyConnection, run_id: str) -> List[Dict[str, Any]]:
    """The S7.7 per-case records of a run, in row order, `index` counted per language."""
    out, seen = [], {}
    for (lang, _row, item_id, state, instructions, options, texts, gold, pred, probs, conf, correct, t,
         t_clamped, t_raw, logits, latency) in con.execute(_CASES, [run_id]).fetchall():
        options = list(options)
        gold_index, pred_index = _index(options, gold), _index(options, pred)
        probs = None if probs is None else list(probs)

        def p(i: Optional[int]) -> Optional[float]:
            return probs[i] if probs is not None and i is not None else None

        index = seen[lang] = seen.get(lang, -1) + 1
        out.append({"lang": lang, "index": index, "state": None if state is None else json.loads(state),
                    "instructions": instructions, "options": options,
                    "option_texts": metrics.descriptions(options, list(texts)),
                    "gold_index": gold_index, "gold_label": gold, "pred_index": pred_index, "pred_label": pred,
                    "probability": p(pred_index), "p_gold": p(gold_index), "confidence": conf,
                    "correct": None if correct is None else int(correct), "temperature": t,
                    "item_id": item_id, "probabilities": probs, "logits": None if logits is None else list(logits),
                    "temperature_clamped": t_clamped, "temperature_unclamped": t_raw, "latency_ms": latency})
    return out


def _config(con: duckdb.DuckDBPyConnection, run_id: str) -> Dict[str, Any]:
    row = con.execute("SELECT model_id, runner, config_json, settings_json FROM runs WHERE run_id = ?",
                      [run_id]).fetchone()
    model_id, runner, config, settings = row[0], row[1], json.loads(row[2]), json.loads(row[3])
    out = {"run_id": run_id, "checkpoint": model_id, "runner": runner, "model": config.get("model")}
    for key in ("subfolder", "device", "max_length", "head_max_len", "temperatures", "temperature",
                "temperature_by_options", "laya_version"):
        if key in settings:
            out["max_len" if key == "max_length" else key] = settings[key]
    harness = config.get("massive") or {}
    out.update({k: v for k, v in harness.items() if k != "schema"})
    out.setdefault("dataset", config.get("dataset"))
    return out


def recheck(report: Dict[str, Dict[str, Any]], records: List[Dict[str, Any]]) -> None:
    """The harness's own check: |mean(correct) - accuracy| < 5e-5 for every reported language."""
    for lang, block in report.items():
        mine = [c["correct"] for c in records if c["lang"] == lang and c["correct"] is not None]
        if "accuracy" in block and mine and abs(sum(mine) / len(mine) - block["accuracy"]) >= RECHECK_TOLERANCE:
            raise UsageError("re-derivation check failed for %s: mean(correct) %.6f vs accuracy %.4f"
                             % (lang, sum(mine) / len(mine), block["accuracy"]))


def build(wh: Warehouse, run_id: str, regime: Optional[str] = None, with_cases: bool = True) -> Dict[str, Any]:
    """The harness document of a committed run, recomputed from the store; `regime` re-derives the
    report from the stored logits under that regime's temperatures (metrics.prepare), without cases."""
    con = connect(wh, [run_id])
    langs = metrics.langs_of(con, run_id)
    report = metrics.report(con, run_id, langs, regime)
    config = dict(_config(con, run_id), **({"regime": regime} if regime else {}))
    doc = {"schema": DOCUMENT, "config": config, "report": report, "summary": metrics.summary(report)}
    if with_cases and regime is None:
        records = cases(con, run_id)
        recheck(report, records)
        doc["cases"] = records
    return doc


# ---------------------------------------------------------------------------- import
def _case_row(case: Any, i: int, where: str, model: Any) -> Dict[str, Any]:
    """One document case -> a labelled row with its answer (S1, S2.4)."""
    at = "%s cases[%d]" % (where, i)
    if not isinstance(case, dict):
        raise UsageError("%s must be an object" % at)
    for key, kinds in (("lang", str), ("options", list), ("gold_index", int), ("pred_index", int),
                       ("instructions", str)):
        if not isinstance(case.get(key), kinds) or isinstance(case.get(key), bool):
            raise UsageError("%s field %r must be a %s" % (at, key, kinds.__name__))
    options = case["options"]
    texts = case.get("option_texts") or options
    if not all(isinstance(o, str) for o in options) or len(texts) != len(options) or len(set(options)) != len(options):
        raise UsageError("%s field 'options' must be distinct strings, one option_texts entry each" % at)
    for key in ("gold_index", "pred_index"):
        if not 0 <= case[key] < len(options):
            raise UsageError("%s field %r is outside the %d options" % (at, key, len(options)))
    conf = case.get("confidence", case.get("probability"))
    if isinstance(conf, bool) or not isinstance(conf, (int, float)):
        raise UsageError("%s field 'confidence' must be a number" % at)
    answer: Dict[str, Any] = {"type": "choice", "choice": options[case["pred_index"]], "answer_confidence": conf}
    probs = case.get("probabilities")
    if isinstance(probs, list) and len(probs) == len(options):
        answer["probabilities"] = dict(zip(options, probs))
    row = {"state": case.get("state"), "language": case["lang"],
           "questions": {"intent": {"type": "choice", "instructions": case["instructions"],
                                    "criteria": dict(zip(options, texts))}},
           "expected": {"intent": options[case["gold_index"]]}, "answers": {"intent": answer}}
    if case.get("item_id") is not None:
        row["item_id"] = str(case["item_id"])
    if model is not None:
        row["model"] = model
    return row


def _facts(case: Dict[str, Any]) -> Dict[str, Any]:
    facts = {k: case.get(k) for k in ("temperature", "temperature_clamped", "temperature_unclamped", "logits")
             if case.get(k) is not None}
    facts["state_json"] = json.dumps(case.get("state"), ensure_ascii=False, separators=(",", ":"))
    return facts


def read(path: str) -> Dict[str, Any]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError, RecursionError) as exc:       # RecursionError: nested too deep to read
        raise UsageError("%s cannot be read as JSON: %s" % (path, shorten(str(exc), 200))) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list) or not doc["cases"]:
        raise UsageError("%s is not a harness document: it needs a non-empty 'cases' list (export it with "
                         "--format harness, or write the laya-evals report with its cases)" % path)
    return doc


def _report_languages(path: str, doc: Dict[str, Any]) -> List[str]:
    """One language per case slot, in order: each language of `report` (document order) `n` times."""
    report = doc.get("report")
    slots: List[str] = []
    if isinstance(report, dict):
        for lang, block in report.items():
            n = block.get("n") if isinstance(block, dict) and "error" not in block else 0
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise UsageError("%s report[%r] field 'n' must be a count: it says which cases are of %s"
                                 % (path, lang, lang))
            slots += [lang] * n
    if len(slots) != len(doc["cases"]):
        raise UsageError("%s cases: a case without 'lang' takes its language from the report, whose 'n' "
                         "count %d cases, not the document's %d" % (path, len(slots), len(doc["cases"])))
    return slots


def with_positions(path: str, doc: Dict[str, Any]) -> Dict[str, Any]:
    """The document with every case's `lang` and `index` (S7.7). The harness writes its cases language
    by language, in its report's order, `n` each, and `index` counts within a language; a case that
    leaves them out gets them from that order (a case that carries them keeps its own)."""
    cases_in = doc["cases"]
    if all(isinstance(c, dict) and "lang" in c and "index" in c for c in cases_in):
        return doc
    slots = (_report_languages(path, doc) if any(isinstance(c, dict) and "lang" not in c for c in cases_in)
             else [None] * len(cases_in))
    out, seen = [], {}
    for case, slot in zip(cases_in, slots):
        if isinstance(case, dict) and ("lang" not in case or "index" not in case):
            case = dict(case)
            case.setdefault("lang", slot)
            if isinstance(case["lang"], str):
                case.setdefault("index", seen.get(case["lang"], 0))
        if isinstance(case, dict) and isinstance(case.get("lang"), str):
            seen[case["lang"]] = seen.get(case["lang"], 0) + 1
        out.append(case)
    return dict(doc, cases=out)


def import_document(wh: Warehouse, path: str, run_id: Optional[str] = None) -> RecordedRun:
    """Commit a harness document's cases as a run of kind `import` (nothing is committed on a bad case)."""
    doc = with_positions(path, read(path))
    recorder = RunRecorder(wh, new_run_id() if run_id is None else run_id, path)
    check_free(wh, recorder.run_id)
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    model = config.get("model") or config.get("checkpoint")       # the model slice, as the run had it
    model = model if isinstance(model, str) else None
    with recorder.staging():
        for i, case in enumerate(doc["cases"]):
            row = Row(index=i, line_no=i + 1, raw=_case_row(case, i, path, model))
            recorder.note_row(row)
            latency = case.get("latency_ms")
            call = {"call_id": i, "chunk_size": 1, "returned": True,
                    "call_ms": float(latency) if isinstance(latency, (int, float)) and not isinstance(latency, bool)
                    else None}
            facts = _facts(case)

            def missing(_pos: int, qid: str) -> None:        # every case carries its answer
                raise UsageError("%s cases[%d] has no answer" % (path, i))

            recorder.add_answers(row, row.raw["answers"], model=model, call=call, field="cases[%d]" % i,
                                 missing=missing, extra=lambda _qid: dict(facts))
            recorder.flush()
        import_checks.check(path, doc)                 # contradictions: refused before the commit
        settings = {"imported": path, "document_config": config}
        return recorder.commit(kind="import", dataset=str(config.get("dataset") or path), dataset_sha256=None,
                               runner="recorded", model_id=config.get("checkpoint"), config={"massive": config},
                               settings=settings)
