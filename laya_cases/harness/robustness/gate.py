"""Gate rules on robustness numbers: the S6.5 policy file, judged by the same SQL (sql/gates/policy*.sql).

A rule names a language slice and a metric `<group>.<field>`: a group of S7.16 (`option_order`,
`label_rename`, `overall`) with one of its fields (`semantic_agreement_rate`, `mean_js_divergence`, ...),
or a kind's quality (`baseline.accuracy`, `option_order.ece`, `label_rename.n_labelled`, ...). The one
extension: `"slice": {"language": "*"}` is the rule repeated for every language of the run (a failed
language has no value, so it fails the rule). `min_count` counts the language's pairs of that group
(quality metrics: its labelled cases of that kind). Only absolute limits (`min`, `max`) apply.

    {"version": 1, "rules": [{"slice": {"language": "*"}, "metric": "option_order.semantic_agreement_rate",
                              "min": 0.9, "min_count": 20}]}
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.gates import policy as P
from laya_cases.gates.tables import load_report_tables
from laya_cases.harness.robustness.summary import GROUP_FIELDS, GROUPS
from laya_cases.harness.robustness.variants import KINDS

ALL = "*"


def load(path: str) -> Dict[str, Any]:
    """The policy file, checked as S6.5 says; a relative rule is refused (no baseline here)."""
    policy = P.load_policy(path)
    if P.needs_baseline(policy):
        raise UsageError("%s: robustness gate rules take an absolute limit (min or max), not max_drop/max_increase"
                         % path)
    return policy


def flat(summary: Dict[str, Any]) -> Dict[str, float]:
    """A summary (all languages or one) as `<group>.<field>` -> value."""
    out: Dict[str, float] = {}
    for group in GROUPS:
        for name, value in summary.get(group, {}).items():
            out["%s.%s" % (group, name)] = value
    for kind, quality in summary.get("quality", {}).items():
        for name, value in quality.items():
            out["%s.%s" % (kind, name)] = value
    return out


def _expanded(policy: Dict[str, Any], languages: List[str]) -> Dict[str, Any]:
    rules = []
    for rule in policy["rules"]:
        dim, key = next(iter(rule["slice"].items()))
        if dim == "language" and key == ALL:
            rules += [dict(copy.deepcopy(rule), slice={"language": lang}) for lang in languages]
        else:
            rules.append(rule)
    return {"version": policy["version"], "rules": rules}


def _cases(con) -> List[Dict[str, Any]]:
    """One gate case per pair (scored for its group and `overall`) and per labelled case of each kind."""
    cases: List[Dict[str, Any]] = []
    for lang, kind, agree in con.execute(
            "SELECT coalesce(language_key, ''), variant, agree FROM robustness_pairs ORDER BY row_index, variant").fetchall():
        scores = {"%s.%s" % (g, f): float(agree) for g in (kind, "overall") for f in GROUP_FIELDS}
        cases.append({"language": lang, "scores": scores})
    for kind, key, correct, n in con.execute(
            "SELECT dim, key, correct, n FROM slice_cells WHERE key LIKE 'language=%' ORDER BY ALL").fetchall():
        scores = {"%s.%s" % (kind, f): float(correct) for f in ("n_labelled", "accuracy", "ece")}
        cases += [{"language": key[len("language="):], "scores": scores} for _ in range(n)]
    return cases


def judge(con, doc: Dict[str, Any], policy: Dict[str, Any]) -> Tuple[List[str], List[Dict[str, Any]]]:
    """(failure lines, one measure row per expanded rule) over a connection `summary.summarize` filled."""
    languages = sorted(doc["languages"])
    slices = {"language": {lang: flat(entry) for lang, entry in doc["languages"].items() if "error" not in entry}}
    load_report_tables(con, {"candidate": {"overall": flat(doc["summary"]), "slices": slices,
                                           "cases": _cases(con)}})
    expanded = _expanded(policy, languages)
    if not expanded["rules"]:
        return ["robustness gate: the run has no language for the rules to read"], []
    return P.check_policy(con, {}, expanded, None)


__all__ = ["load", "judge", "flat", "KINDS"]
