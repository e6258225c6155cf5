"""The robustness document of a committed run, from the store alone (S7.15, S7.16): no model.

    {"schema", "run_id", "dataset", "model_id", "seed",
     "summary": {"option_order": G, "label_rename": G, "overall": G,
                 "quality": {"baseline": Q, "option_order": Q, "label_rename": Q}},
     "languages": {<language>: {same four keys, "n_cases", "n_errors"} | {"error": <first 200 chars>}},
     "errors": <error records>, "failed_languages": [...],
     "config": <the run's config>, "cases": [R, ...]}           (config and cases: with_cases)

G is sql/robustness/groups.sql's row without its keys (`{"n": 0}` when the group has no pair); Q is
`n_labelled`, and when it is > 0 `accuracy` (sql/robustness/quality.sql) and `ece` (the report's own
sql/metrics/reliability.sql + ece.sql over sql/robustness/quality_cells.sql, summed by
sql/robustness/quality_sums.sql). `summary` pools the pairs of every language that did not fail; rows without a language are the language "".
R is one presentation (sql/robustness/cases.sql, error records included): lang, row_index, case_id,
kind, options (canonical keys), slot_order (canonical index at each presented slot), presented_keys
(slot order), label_map (canonical -> presented key), inverse_label_map (presented -> canonical key),
probabilities (canonical order), pred_index, pred_label, confidence, gold_index, gold_label, correct,
baseline (a variant's pair: the baseline case id, its pred_index and confidence, semantic_agreement and
the S7.15 numbers; null for a baseline, or with no pair) and error. Every number of the document is
re-derivable from `cases` alone (tests/harness/test_robustness_document.py).
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.robustness import variants as V

SCHEMA = "laya-cases-robustness/1"
GROUPS = ("option_order", "label_rename", "overall")
GROUP_FIELDS = ("n", "semantic_agreement_rate", "mean_probability_drift", "max_probability_drift",
                "mean_js_divergence", "mean_confidence_drift", "mean_absolute_confidence_drift",
                "worst_confidence_increase_on_disagreement")


def robustness_config(con, run_id: str) -> Dict[str, Any]:
    row = con.execute("SELECT kind, config_json FROM runs WHERE run_id = $r", {"r": run_id}).fetchone()
    config = json.loads(row[1]) if row and row[1] else {}
    block = config.get("robustness")
    if not isinstance(block, dict):
        raise UsageError("run %s is not a robustness run (it has no variants; make one with "
                         "`laya-cases robustness DATASET`)" % shorten(repr(run_id)))
    return config


def _group(row: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    if row is None:
        return {"n": 0}
    return {name: row[name] for name in GROUP_FIELDS}


def _quality(rows: Dict[tuple, Dict[str, Any]], eces: Dict[tuple, float], key: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for kind in V.KINDS:
        row = rows.get((kind, key))
        entry: Dict[str, Any] = {"n_labelled": 0 if row is None else int(row["n_labelled"])}
        if row is not None and row["n_labelled"] > 0:
            entry["accuracy"] = row["accuracy"]
            entry["ece"] = eces[(kind, key)]
        out[kind] = entry
    return out


def _tables(con, run_id: str, failed: List[str]) -> None:
    params = {"run_id": run_id, "failed": list(failed)}
    sqlfiles.materialize(con, "robustness/pairs.sql", "robustness_pairs", params)
    sqlfiles.materialize(con, "robustness/groups.sql", "robustness_groups")
    sqlfiles.materialize(con, "robustness/quality_cells.sql", "slice_cells", params)
    sqlfiles.materialize(con, "robustness/quality_sums.sql", "slice_sums")
    sqlfiles.materialize(con, "metrics/reliability.sql", "reliability")


def _record(r: Dict[str, Any]) -> Dict[str, Any]:
    """One row of sql/robustness/cases.sql as the document's case: the two label mappings as objects
    (canonical key -> presented key, presented key -> canonical key, in canonical and slot order)."""
    labels, keys = r["presented_labels"], r["presented_keys"]
    baseline = None
    if r["agree"] is not None:
        baseline = {"case_id": r["parent_case_id"], "pred_index": r["baseline_pred"],
                    "confidence": r["baseline_confidence"], "semantic_agreement": r["agree"],
                    "mean_probability_drift": r["mean_drift"], "max_probability_drift": r["max_drift"],
                    "js_divergence": r["js"], "confidence_drift": r["confidence_drift"]}
    return {"lang": r["language"], "row_index": r["row_index"], "case_id": r["case_id"], "kind": r["kind"],
            "options": r["options"], "slot_order": r["slot_order"], "presented_keys": keys,
            "label_map": None if labels is None or r["options"] is None else dict(zip(r["options"], labels)),
            "inverse_label_map": None if keys is None or r["slot_options"] is None
            else dict(zip(keys, r["slot_options"])),
            "probabilities": r["probabilities"], "pred_index": r["pred_index"], "pred_label": r["pred_label"],
            "confidence": r["confidence"], "gold_index": r["gold_index"], "gold_label": r["gold_label"],
            "correct": r["correct"], "baseline": baseline, "error": r["error"]}


def case_records(con, run_id: str) -> List[Dict[str, Any]]:
    """Every presentation of the run (error records too) as the document's `cases`, from
    sql/robustness/cases.sql over the pairs summarize() materialized."""
    return [_record(r) for r in sqlfiles.rows(sqlfiles.query(con, "robustness/cases.sql", {"run_id": run_id}))]


def summarize(con, run_id: str, with_cases: bool = False) -> Dict[str, Any]:
    """The robustness document of `run_id` over a connection whose `cases`/`decisions` hold it unfiltered;
    `config` and `cases` (every presentation's record) with `with_cases`."""
    config = robustness_config(con, run_id)
    block = config["robustness"]
    failed = block.get("failed_languages") or {}
    _tables(con, run_id, sorted(failed))
    groups = {(r["scope"], r["language"], r["kind"]): r
              for r in sqlfiles.rows(con.execute("SELECT * FROM robustness_groups"))}
    quality = {(r["kind"], r["key"]): r for r in sqlfiles.rows(sqlfiles.query(con, "robustness/quality.sql"))}
    eces = {(r["dim"], r["key"]): r["value"] for r in sqlfiles.rows(sqlfiles.query(con, "metrics/ece.sql"))}
    languages: Dict[str, Any] = {}
    for lang in sqlfiles.rows(sqlfiles.query(con, "robustness/languages.sql", {"run_id": run_id})):
        name = lang["language"]
        if name in failed:
            languages[name] = {"error": failed[name]}
            continue
        entry = {kind: _group(groups.get(("language", name, kind))) for kind in GROUPS}
        entry["quality"] = _quality(quality, eces, "language=" + name)
        entry.update(n_cases=lang["n_cases"], n_errors=lang["n_errors"])
        languages[name] = entry
    summary: Dict[str, Any] = {kind: _group(groups.get(("all", None, kind))) for kind in GROUPS}
    summary["quality"] = _quality(quality, eces, "all")
    errors = sum(v.get("n_errors", 0) for v in languages.values() if "error" not in v)
    doc = {"schema": SCHEMA, "run_id": run_id, "dataset": config.get("dataset"),
           "seed": block.get("seed"), "summary": summary, "languages": languages,
           "errors": errors, "failed_languages": sorted(failed)}
    if with_cases:
        doc.update(config=config, cases=case_records(con, run_id))
    return doc


def strict_json(doc: Dict[str, Any]) -> str:
    """The document as strict JSON (a non-finite number would be a bug: refused, never written as NaN)."""
    return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False) + "\n"


def finite(doc: Any) -> bool:
    if isinstance(doc, float):
        return math.isfinite(doc)
    if isinstance(doc, dict):
        return all(finite(v) for v in doc.values())
    if isinstance(doc, list):
        return all(finite(v) for v in doc)
    return True
