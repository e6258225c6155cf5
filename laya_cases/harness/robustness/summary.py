"""The robustness document of a committed run, from the store alone (S7.15, S7.16): no model.

    {"schema", "run_id", "dataset", "model_id", "seed",
     "summary": {"option_order": G, "label_rename": G, "overall": G,
                 "quality": {"baseline": Q, "option_order": Q, "label_rename": Q}},
     "languages": {<language>: {same four keys, "n_cases", "n_errors"} | {"error": <first 200 chars>}},
     "errors": <error records>, "failed_languages": [...]}

G is sql/robustness/groups.sql's row without its keys (`{"n": 0}` when the group has no pair); Q is
`n_labelled`, and when it is > 0 `accuracy` (sql/robustness/quality.sql) and `ece` (the report's own
sql/metrics/reliability.sql + ece.sql over sql/robustness/quality_cells.sql, summed by
sql/robustness/quality_sums.sql). `summary` pools the pairs of every language that did not fail; rows without a language are the language "".
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


def summarize(con, run_id: str) -> Dict[str, Any]:
    """The robustness document of `run_id` over a connection whose `cases`/`decisions` hold it unfiltered."""
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
    return {"schema": SCHEMA, "run_id": run_id, "dataset": config.get("dataset"),
            "seed": block.get("seed"), "summary": summary, "languages": languages,
            "errors": errors, "failed_languages": sorted(failed)}


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
