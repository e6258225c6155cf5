"""The gate policy file (S6.5): read and validated before anything is loaded or run."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import duckdb
import pyarrow as pa

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import catalogue, paired_bootstrap
from laya_cases.query import sql as sqlfiles
from laya_cases.query.resample import quantile_levels
from laya_cases.gates.documents import (IDENTITY_KEYS, comparability_reasons, coverage_definition_conflict,
                                      identity_of, named, read_json)
from laya_cases.gates.inputs import (ADJUST, ADJUSTMENTS, DIMENSIONS, EVIDENCE_BOOTSTRAP, EVIDENCE_SEED,
                                    INSUFFICIENT_CHOICES, LIMITS, ON_INSUFFICIENT, RELATIVE, SIGNIFICANT_AT,
                                    finite_number)
from laya_cases.gates.messages import rule_line
from laya_cases.gates.tables import register

#: min_count is compared in DuckDB as a BIGINT: a larger one is refused up front, not after a commit
MAX_COUNT = 2 ** 63 - 1


def load_policy(path: str) -> Dict[str, Any]:
    """Read and validate a gate policy before anything is loaded or run; raises UsageError, the S6.5
    message after the file's name (`policy.json: gate policy rule 2 min_count must be ...`)."""
    policy = read_json(path, "invalid gate policy %s: %s")
    try:
        check_policy_document(policy)
    except UsageError as exc:
        raise UsageError(named(path, str(exc))) from None
    return policy


def check_policy_document(policy: Any) -> None:
    """S6.5, the checks in the spec's order; the first failure is the UsageError."""
    if not isinstance(policy, dict) or set(policy) != {"version", "rules"}:
        raise UsageError("gate policy needs exactly 'version' and 'rules'")
    if type(policy["version"]) is not int or policy["version"] != 1:
        raise UsageError("gate policy version must be 1")
    rules = policy["rules"]
    if not isinstance(rules, list) or not rules:
        raise UsageError("gate policy 'rules' must be a non-empty list")
    for index, rule in enumerate(rules, 1):
        where = "gate policy rule %d" % index
        if not isinstance(rule, dict):
            raise UsageError("%s must be an object" % where)
        limits = set(rule) & set(LIMITS)
        if (set(rule) - {"slice", "metric", "min_count", SIGNIFICANT_AT, ADJUST, ON_INSUFFICIENT} - set(LIMITS)
                or len(limits) != 1 or not {"slice", "metric", "min_count"} <= set(rule)):
            raise UsageError("%s needs slice, metric, min_count and exactly one limit" % where)
        selector = rule["slice"]
        if (not isinstance(selector, dict) or len(selector) != 1 or next(iter(selector)) not in DIMENSIONS
                or not isinstance(next(iter(selector.values())), str)
                or not next(iter(selector.values())).strip()):
            raise UsageError("%s slice must name one non-empty language/model/qid/tag value" % where)
        if not isinstance(rule["metric"], str) or not rule["metric"].strip():
            raise UsageError("%s metric must be a non-empty string" % where)
        if type(rule["min_count"]) is not int or rule["min_count"] < 1:
            raise UsageError("%s min_count must be a positive integer" % where)
        if rule["min_count"] > MAX_COUNT:
            raise UsageError("%s min_count must be at most %d, got %s"
                             % (where, MAX_COUNT, shorten(str(rule["min_count"]))))
        name = next(iter(limits))
        if not finite_number(rule[name]) or (name in RELATIVE and rule[name] < 0):
            raise UsageError("%s %s must be finite%s" % (where, name, " and non-negative" if name in RELATIVE else ""))
        if SIGNIFICANT_AT in rule:
            _check_significance(where, rule, name)
        for key, choices in ((ADJUST, ADJUSTMENTS), (ON_INSUFFICIENT, INSUFFICIENT_CHOICES)):
            if key in rule and (SIGNIFICANT_AT not in rule or rule[key] not in choices):
                raise UsageError("%s %s must be %s on a rule with %s"
                                 % (where, key, " or ".join(repr(c) for c in choices), SIGNIFICANT_AT))


def _check_significance(where: str, rule: Dict[str, Any], limit: str) -> None:
    alpha = rule[SIGNIFICANT_AT]
    if limit not in RELATIVE or not finite_number(alpha) or not 0 < alpha < 1:
        raise UsageError("%s %s must be a number in (0, 1) on a max_drop or max_increase rule" % (where, SIGNIFICANT_AT))
    metric = rule["metric"]
    if not catalogue.is_per_case(metric):
        names = catalogue.per_case_names()
        listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)
        raise UsageError("%s %s needs a per-case 0/1 metric (%s), got %s"
                         % (where, SIGNIFICANT_AT, listed, shorten(repr(metric))))


def needs_baseline(policy: Dict[str, Any]) -> bool:
    return any(set(rule) & set(RELATIVE) for rule in policy["rules"])


# ------------------------------------------------------------------------------- slice policy (S6.6)
def check_policy(con: duckdb.DuckDBPyConnection, config: Dict[str, Any], policy: Dict[str, Any],
                 baseline: Optional[Dict[str, Any]]) -> Tuple[List[str], List[Dict[str, Any]]]:
    """S6.6 over the gate tables: (failure lines, one measure row per rule). A missing measurement never passes."""
    failures: List[str] = []
    base_config = identity_of(baseline) if baseline is not None else None
    if config.get("errored"):
        failures.append("slice gate: candidate has skipped/errored cases")
    if base_config is not None and base_config.get("errored"):
        failures.append("slice gate: baseline has skipped/errored cases")
    if needs_baseline(policy):
        if baseline is None:
            return failures + ["slice gate: relative rule needs a baseline"], []
        missing = [key for key in IDENTITY_KEYS if config.get(key) is None or base_config.get(key) is None]
        if missing:
            failures.append("slice gate: baseline and candidate need %s identity" % ", ".join(missing))
        reasons = comparability_reasons(config, baseline)
        if reasons:
            failures.append("slice gate: baseline is not comparable: " + "; ".join(reasons))
    rules = policy["rules"]
    conflicts: Dict[int, str] = {}
    for pos, rule in enumerate(rules, 1):
        limit = next(name for name in LIMITS if name in rule)
        if limit in RELATIVE and catalogue.is_coverage_metric(rule["metric"]):
            conflict = coverage_definition_conflict(config, baseline)
            if conflict is not None:
                conflicts[pos] = conflict
    limit_names = [next(name for name in LIMITS if name in rule) for rule in rules]
    register(con, "gate_rules", {
        "pos": (pa.int64(), list(range(1, len(rules) + 1))),
        "dim": (pa.string(), [next(iter(r["slice"])) for r in rules]),
        "key": (pa.string(), [next(iter(r["slice"].values())) for r in rules]),
        "metric": (pa.string(), [r["metric"] for r in rules]),
        "min_count": (pa.int64(), [r["min_count"] for r in rules]),
        "limit_name": (pa.string(), limit_names),
        "bound": (pa.float64(), [float(r[name]) for r, name in zip(rules, limit_names)]),
        "coverage_conflict": (pa.string(), [conflicts.get(pos) for pos in range(1, len(rules) + 1)]),
        "paired_metric": (pa.bool_(), [catalogue.is_paired(r["metric"]) for r in rules]),
        "significant_at": (pa.float64(), [None if r.get(SIGNIFICANT_AT) is None else float(r[SIGNIFICANT_AT])
                                          for r in rules]),
        "adjust": (pa.string(), [r.get(ADJUST) for r in rules]),
        "on_insufficient": (pa.string(), [r.get(ON_INSUFFICIENT) for r in rules]),
    })
    sqlfiles.materialize(con, "gates/policy_pairs.sql", "policy_pairs")
    sqlfiles.materialize(con, "gates/policy_measures.sql", "policy_measures")
    sqlfiles.materialize(con, "gates/policy_p_family.sql", "p_family")
    sqlfiles.materialize(con, "compare/adjusted_p.sql", "adjusted_p")
    _evidence_intervals(con, any(ON_INSUFFICIENT in r for r in rules))
    sqlfiles.materialize(con, "gates/policy_verdicts.sql", "policy_verdicts")
    failures += [rule_line(row, conflicts) for row in sqlfiles.rows(sqlfiles.query(con, "gates/policy.sql"))]
    measures = sqlfiles.rows(con.execute("SELECT * FROM policy_verdicts ORDER BY pos"))
    return failures, measures


def _evidence_intervals(con: duckdb.DuckDBPyConnection, wanted: bool) -> None:
    """policy_intervals: the paired bootstrap 95% interval of each on_insufficient rule's delta; the
    draws are of candidate case positions (none unless a rule asks: the bootstrap is the slow part)."""
    n = con.execute("SELECT count(*) FROM gate_cases WHERE side = 'candidate'").fetchall()[0][0] if wanted else 0
    sqlfiles.materialize(con, "gates/policy_case_classes.sql", "policy_case_classes")
    sqlfiles.materialize(con, "gates/policy_class_pairs.sql", "policy_class_pairs")
    con.register("boot_values", paired_bootstrap.replicate_values(
        con, EVIDENCE_SEED, n, EVIDENCE_BOOTSTRAP, "policy_case_classes", "gates/policy_replicates.sql"))
    lower, upper = quantile_levels(0.95)
    sqlfiles.materialize(con, "bootstrap/intervals.sql", "policy_intervals", {"lower": lower, "upper": upper})
