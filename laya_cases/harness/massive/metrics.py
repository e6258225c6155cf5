"""The harness's per-language block and summary from the store (S7.5, S7.6).

Every number is computed by sql/massive/languages.sql over sql/massive/cases.sql; this module only
rounds (Python round(x, 4): half-even on the binary value, as the reference) and takes the S7.6
means of the rounded values. `input_sha256` is an identity digest, not a metric: the SHA-256 of the
compact JSON list (raw non-ASCII, keys in the order below) of every case's lang, index, state,
instructions, options, option_texts and gold_index, from the stored rows.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Dict, List, Optional

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles

METRICS = ("accuracy", "macro_f1", "ece", "mean_confidence", "acc_at_50_coverage", "selective_accuracy@50")


def descriptions(options: List[str], rendered: List[str]) -> List[str]:
    """The option texts as the harness lists them (the criteria values), from the stored rendered
    texts `label: description` (S2.3); a bare label has the empty description."""
    return [t[len(o) + 2:] if t.startswith(o + ": ") else "" if t == o else t for o, t in zip(options, rendered)]


def _r(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(float(value), 4)


REGIMES = ("clamped", "unclamped")


def prepare(con: duckdb.DuckDBPyConnection, run_id: str, regime: Optional[str] = None) -> None:
    """Materialize `massive_cases` for the run (the table languages.sql reads): the stored decisions,
    or with `regime` ('clamped'/'unclamped') predictions and confidences re-derived from the stored
    logits and that regime's temperatures (sql/massive/rederive.sql; no model)."""
    if regime is None:
        sqlfiles.materialize(con, "massive/cases.sql", "massive_cases", {"run_id": run_id})
    elif regime in REGIMES:
        sqlfiles.materialize(con, "massive/rederive.sql", "massive_cases", {"run_id": run_id, "regime": regime})
    else:
        raise UsageError("--regime must be clamped or unclamped, got %r" % (regime,))


def raw_languages(con: duckdb.DuckDBPyConnection) -> Dict[str, Dict[str, Any]]:
    """lang -> the unrounded row of sql/massive/languages.sql (over an existing massive_cases table)."""
    return {r["lang"]: r for r in sqlfiles.rows(sqlfiles.query(con, "massive/languages.sql"))}


def block(row: Dict[str, Any]) -> Dict[str, Any]:
    """One language's S7.5 block, rounded."""
    out: Dict[str, Any] = {"n": int(row["n"])}
    for key in ("accuracy", "macro_f1", "ece", "mean_confidence", "acc_at_50_coverage"):
        out[key] = _r(row[key])
    out["acc_at_50_tie_straddle"] = bool(row["acc_at_50_tie_straddle"])
    out["selective_accuracy@50"] = _r(row["selective_accuracy_50"])
    out["temperature"] = row["temperature"] if row["n_temperatures"] == 1 else None
    out["seconds"] = None if row["seconds"] is None else round(float(row["seconds"]), 3)
    return out


def input_sha256(con: duckdb.DuckDBPyConnection, run_id: str, lang: str) -> Optional[str]:
    """S7.5 `input_sha256` of one language, or None when a stored state is missing (older runs)."""
    records = con.execute(
        "SELECT state_json, instructions, options, option_texts, "
        "       list_position(options, json_extract_string(expected_json, '$')) - 1 "
        "FROM cases WHERE run_id = ? AND language_key = ? AND question_type = 'choice' "
        "ORDER BY row_index, qid_pos", [run_id, lang]).fetchall()
    if not records or any(r[0] is None for r in records):
        return None
    cases = [{"lang": lang, "index": i, "state": json.loads(state), "instructions": instructions,
              "options": list(options), "option_texts": descriptions(list(options), list(texts)),
              "gold_index": gold}
             for i, (state, instructions, options, texts, gold) in enumerate(records)]
    text = json.dumps(cases, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def errors(con: duckdb.DuckDBPyConnection, run_id: str) -> Dict[str, str]:
    """lang -> its first error record's text (a language with an error is reported as failed)."""
    found = con.execute("SELECT language_key, arg_min(error, row_index) FROM errors WHERE run_id = ? "
                        "AND language_key IS NOT NULL GROUP BY language_key", [run_id]).fetchall()
    return {lang: str(error)[:200] for lang, error in found}


def report(con: duckdb.DuckDBPyConnection, run_id: str, langs: List[str],
           regime: Optional[str] = None) -> Dict[str, Dict[str, Any]]:
    """{lang: block | {"n": 0} | {"error": ...}} in `langs` order (S7.5)."""
    prepare(con, run_id, regime)
    if regime is not None and not con.execute("SELECT count(*) FROM massive_cases").fetchone()[0]:
        raise UsageError("run %r stores no logits (a Laya checkpoint run does); --regime re-derives from them"
                         % run_id)
    rows, failed = raw_languages(con), errors(con, run_id)
    out: Dict[str, Dict[str, Any]] = {}
    for lang in langs:
        if lang in failed:
            out[lang] = {"error": failed[lang]}
        elif lang not in rows:
            out[lang] = {"n": 0}
        else:
            out[lang] = dict(block(rows[lang]), input_sha256=input_sha256(con, run_id, lang))
    return out


def summary(blocks: Dict[str, Dict[str, Any]], seconds: Optional[float] = None) -> Dict[str, Any]:
    """S7.6: over languages without error and with n > 0, the means of the rounded values, rounded;
    each sum exactly rounded (math.fsum, S9.8), so the value does not depend on the languages' order."""
    good = [b for b in blocks.values() if "error" not in b and b.get("n", 0) > 0]

    def mean(key: str) -> Optional[float]:
        values = [b[key] for b in good if b.get(key) is not None]
        return round(math.fsum(values) / len(values), 4) if values else None

    if seconds is None:
        seconds = round(math.fsum(b.get("seconds") or 0.0 for b in good), 3)
    return {"languages": len(good), "macro_accuracy": mean("accuracy"), "macro_ece": mean("ece"),
            "macro_f1": mean("macro_f1"), "seconds": seconds}


def langs_of(con: duckdb.DuckDBPyConnection, run_id: str) -> List[str]:
    """The run's languages in first-row order (the order --langs gave)."""
    return [r[0] for r in con.execute("SELECT language_key FROM decisions WHERE run_id = ? AND language_key IS "
                                      "NOT NULL GROUP BY language_key ORDER BY min(row_index)", [run_id]).fetchall()]
