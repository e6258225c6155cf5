"""A robustness run's document (summary.py) and gate verdict (gate.py), read from the store with no model."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from laya_cases.harness.robustness import gate as G
from laya_cases.harness.robustness.summary import finite, summarize
from laya_cases.query.sql import connect


def build(wh, run_id: str, policy: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, Any], List[str]]:
    """(document, failure lines): one line per failed language and per failed policy rule."""
    wh.require_run(run_id)
    con = connect(wh, [run_id], variants=True)
    doc = summarize(con, run_id, with_cases=True)
    failures = ["robustness: language %s failed: %s" % (lang or "(none)", doc["languages"][lang]["error"])
                for lang in doc["failed_languages"]]
    if policy is not None:
        rule_failures, measures = G.judge(con, doc, policy)
        doc["gate"] = {"failures": rule_failures,
                       "measures": [{k: v for k, v in m.items() if finite(v)} for m in measures]}
        failures += rule_failures
    return doc, failures
