"""`import` refuses a harness document that contradicts itself (issue 27 item 10).

`export` runs the harness's own check |mean(correct) - accuracy| < 5e-5 before it writes; `import`
checks at least as much, before anything is committed, and names the file, the case or report
entry and the field of the first contradiction:

* per case: `correct` equals (pred_index == gold_index); `pred_label` and `gold_label`, where
  given, are the options at those indices (a prediction that is not one of the options is
  refused); `probability` and `p_gold` equal probabilities[pred_index] and [gold_index] where the
  case carries its probabilities;
* per language of `report`: `n` is the number of its cases; accuracy, macro_f1, ece,
  mean_confidence, selective_accuracy@50 and (where the 50% cut does not split a tie, so the value
  does not depend on the reference's sort) acc_at_50_coverage equal the values sql/massive/
  languages.sql re-derives from the cases, the same SQL `export` writes them with; the straddle
  flag, the temperature the cases carry and input_sha256 (S7.5) are re-derived too;
* `summary`: languages and the macro means of S7.6 over the document's own report.

A number agrees when it is within RECHECK_TOLERANCE of the unrounded re-derived value, or is its
4-decimal rounding. `seconds` is wall time in a reference document: nothing re-derives it.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Dict, List, Optional

import duckdb
import pyarrow as pa

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.massive import metrics

TOLERANCE = 5e-5                     # = document.RECHECK_TOLERANCE, the export's own check
_DERIVED = (("accuracy", "accuracy"), ("macro_f1", "macro_f1"), ("ece", "ece"),
            ("mean_confidence", "mean_confidence"), ("selective_accuracy@50", "selective_accuracy_50"))
_SHA_FIELDS = ("lang", "index", "state", "instructions", "options", "option_texts", "gold_index")


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _agrees(reported: Any, derived: Optional[float]) -> bool:
    if derived is None or not _number(reported):
        return reported == derived
    if math.isnan(derived) or math.isnan(reported):
        return math.isnan(derived) and math.isnan(reported)
    return abs(reported - derived) < TOLERANCE or reported == round(derived, 4)


def _case(path: str, i: int, case: Dict[str, Any]) -> None:
    """One case against itself (its types and index ranges are already checked)."""
    at = "%s cases[%d] (lang %s, index %s)" % (path, i, case["lang"], case.get("index", i))
    options, gold, pred = case["options"], case["gold_index"], case["pred_index"]
    correct = case.get("correct")
    if correct is not None and (correct not in (0, 1) or int(correct) != int(pred == gold)):
        raise UsageError("%s field 'correct': %r contradicts pred_index %d %s gold_index %d"
                         % (at, correct, pred, "==" if pred == gold else "!=", gold))
    for key, index in (("pred_label", pred), ("gold_label", gold)):
        label = case.get(key)
        if label is not None and label not in options:
            raise UsageError("%s field %r: %r is not one of the %d options" % (at, key, label, len(options)))
        if label is not None and label != options[index]:
            raise UsageError("%s field %r: %r is not options[%d] %r" % (at, key, label, index, options[index]))
    probs = case.get("probabilities")
    if isinstance(probs, list) and len(probs) == len(options):
        for key, index in (("probability", pred), ("p_gold", gold)):
            value = case.get(key)
            if value is not None and _number(probs[index]) and not _agrees(value, probs[index]):
                raise UsageError("%s field %r: %r, but probabilities[%d] is %r" % (at, key, value, index, probs[index]))


def _table(doc_cases: List[Dict[str, Any]]) -> pa.Table:
    """The document's cases as sql/massive/cases.sql would read them back from the store."""
    seen: Dict[str, int] = {}
    cols: Dict[str, list] = {k: [] for k in ("lang", "pos", "row_index", "item_id", "conf", "correct",
                                             "gold_index", "pred_index", "temperature", "cost_ms")}
    for i, c in enumerate(doc_cases):
        seen[c["lang"]] = seen.get(c["lang"], -1) + 1
        latency, t = c.get("latency_ms"), c.get("temperature")
        for key, value in (("lang", c["lang"]), ("pos", seen[c["lang"]]), ("row_index", i),
                           ("item_id", None if c.get("item_id") is None else str(c["item_id"])),
                           ("conf", float(c.get("confidence", c.get("probability")))),
                           ("correct", int(c["pred_index"] == c["gold_index"])), ("gold_index", c["gold_index"]),
                           ("pred_index", c["pred_index"]), ("temperature", float(t) if _number(t) else None),
                           ("cost_ms", float(latency) if _number(latency) else None)):
            cols[key].append(value)
    types = {"lang": pa.string(), "item_id": pa.string(), "correct": pa.int32(), "conf": pa.float64(),
             "temperature": pa.float64(), "cost_ms": pa.float64()}
    return pa.table({k: pa.array(v, type=types.get(k, pa.int64())) for k, v in cols.items()})


def _derive(doc_cases: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """lang -> the unrounded row of sql/massive/languages.sql over the document's cases."""
    con = duckdb.connect()
    try:
        sqlfiles.prepare_connection(con)
        con.register("doc_cases", _table(doc_cases))
        con.execute("CREATE TABLE massive_cases AS SELECT * FROM doc_cases")
        return metrics.raw_languages(con)
    finally:
        con.close()


def _sha(doc_cases: List[Dict[str, Any]], lang: str) -> str:
    mine = [{k: c.get(k) for k in _SHA_FIELDS} for c in doc_cases if c["lang"] == lang]
    return hashlib.sha256(json.dumps(mine, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


def _block(at: str, block: Dict[str, Any], row: Optional[Dict[str, Any]], doc_cases: List[Dict[str, Any]],
           lang: str) -> None:
    """One language's report entry against its re-derived row (None: the document has no case of it)."""
    n = 0 if row is None else int(row["n"])
    if "n" in block and block["n"] != n:
        raise UsageError("%s field 'n': %r, but the document has %d cases of %s" % (at, block["n"], n, lang))
    if row is None:
        return
    straddle = bool(row["acc_at_50_tie_straddle"])
    checks = list(_DERIVED) + ([] if straddle else [("acc_at_50_coverage", "acc_at_50_coverage")])
    for key, column in checks:
        if key in block and not _agrees(block[key], row[column]):
            raise UsageError("%s field %r: %r, but its %d cases give %.6f (tolerance %g)"
                             % (at, key, block[key], n, row[column], TOLERANCE))
    if isinstance(block.get("acc_at_50_tie_straddle"), bool) and block["acc_at_50_tie_straddle"] != straddle:
        raise UsageError("%s field 'acc_at_50_tie_straddle': %r, but its cases give %r"
                         % (at, block["acc_at_50_tie_straddle"], straddle))
    if _number(block.get("temperature")) and row["n_temperatures"] == 1 and row["temperature"] is not None \
            and not _agrees(block["temperature"], row["temperature"]):
        raise UsageError("%s field 'temperature': %r, but its cases carry %r"
                         % (at, block["temperature"], row["temperature"]))
    if isinstance(block.get("input_sha256"), str) and block["input_sha256"] != _sha(doc_cases, lang):
        raise UsageError("%s field 'input_sha256' is not the SHA-256 of its cases' fields (S7.5)" % at)


def _summary(path: str, summary: Dict[str, Any], report: Dict[str, Any]) -> None:
    good = [b for b in report.values() if isinstance(b, dict) and "error" not in b and (b.get("n") or 0) > 0]
    if "languages" in summary and summary["languages"] != len(good):
        raise UsageError("%s summary field 'languages': %r, but its report has %d languages with cases"
                         % (path, summary["languages"], len(good)))
    for key, field in (("macro_accuracy", "accuracy"), ("macro_ece", "ece"), ("macro_f1", "macro_f1")):
        values = [b[field] for b in good if _number(b.get(field))]
        derived = math.fsum(values) / len(values) if values else None
        if key in summary and not _agrees(summary[key], derived):
            raise UsageError("%s summary field %r: %r, but its report's languages give %s"
                             % (path, key, summary[key], derived))


def check(path: str, doc: Dict[str, Any]) -> None:
    """Refuse (UsageError, one line) the first contradiction in a structurally valid document."""
    doc_cases = doc["cases"]
    for i, case in enumerate(doc_cases):
        _case(path, i, case)
    report = doc.get("report")
    if not isinstance(report, dict):
        return
    rows = _derive(doc_cases)
    for lang, block in report.items():
        if isinstance(block, dict) and "error" not in block:
            _block("%s report[%r]" % (path, lang), block, rows.get(lang), doc_cases, lang)
    if isinstance(doc.get("summary"), dict):
        _summary(path, doc["summary"], report)
