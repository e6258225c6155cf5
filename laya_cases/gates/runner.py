"""Gates (spec S5.5-S5.7, S6): the gate runner, over parts split by concern.

A gate is a query that returns the rows that violate it (sql/gates/, sql/compare/overall_deltas.sql),
run over small tables flattened from the candidate report and the baseline document:

    gates/inputs.py      NAME=VALUE flags and limits (S6.1, S6.2)
    gates/policy.py      the policy file, validated (S6.5), and measured per rule (S6.6)
    gates/documents.py   report files and run ids, identity and comparability (S5.6, S5.7, S6.4 (c))
    gates/tables.py      report documents flattened into the gate tables
    gates/thresholds.py  --min/--max (S6.3)
    gates/baseline.py    the baseline comparison (S6.4); reference_order.py sums like the reference
    gates/messages.py    the failure and delta lines

This module prepares a gate from the flags (`prepare`) and judges a report with it (`Gate.judge`,
`compare_documents`). Nothing here prints; the CLI does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core.errors import UsageError
from laya_cases.query import engines
from laya_cases.gates.baseline import (check_baseline, check_report, compare, metric_map, order_dependent,
                                     tolerance_map, written_by_reference)
from laya_cases.gates.documents import (IDENTITY_KEYS, comparability_failure, comparability_reasons,
                                      coverage_definition_conflict, identity_of, load_document, resolve_report)
from laya_cases.gates.inputs import (DIMENSIONS, LIMITS, RELATIVE, SIGNIFICANT_AT, assemble_limits, finite_number,
                                   parse_limit, parse_pairs)
from laya_cases.gates.messages import delta_lines, note_lines  # noqa: F401
from laya_cases.gates.policy import check_policy, load_policy, needs_baseline  # noqa: F401
from laya_cases.gates.tables import connect, load_report_tables  # noqa: F401
from laya_cases.gates.thresholds import check_thresholds
from laya_cases.query.reference_order import reference_order_values  # noqa: F401


@dataclass
class GateRequest:
    """The gate flags of one command as typed; cli/options.py declares them once."""

    mins: Sequence[str] = ()
    maxs: Sequence[str] = ()
    min_accuracy: Optional[str] = None
    max_ece: Optional[str] = None
    baseline: Optional[str] = None
    tolerances: Sequence[str] = ()
    policy_path: Optional[str] = None
    junit: Optional[str] = None              # CI outputs of the verdict (gates/ci.py); not gates themselves
    summary: Optional[str] = None

    @property
    def active(self) -> bool:
        return bool(self.mins or self.maxs or self.min_accuracy is not None or self.max_ece is not None
                    or self.baseline or self.tolerances or self.policy_path)


@dataclass
class GateResult:
    deltas: List[Dict[str, Any]] = field(default_factory=list)
    failures: List[str] = field(default_factory=list)
    compare_ok: bool = True
    measures: List[Dict[str, Any]] = field(default_factory=list)      # one per policy rule
    thresholds: Dict[str, Dict[str, float]] = field(default_factory=dict)   # {"min": {...}, "max": {...}}


@dataclass
class Gate:
    """A validated gate, ready to judge a report (`prepare` builds it)."""

    mins: Dict[str, float]
    maxs: Dict[str, float]
    min_accuracy: Optional[float]
    max_ece: Optional[float]
    tolerances: Dict[str, float]
    baseline_ref: Optional[str]
    policy: Optional[Dict[str, Any]]
    baseline: Optional[Dict[str, Any]] = None
    junit: Optional[str] = None
    summary: Optional[str] = None

    def judge(self, doc: Dict[str, Any], wh=None, options=None, session=None) -> GateResult:
        """S6.8 after evaluation: record thresholds, check them, load the baseline if not yet, compare,
        comparability, policy. Mutates doc (config.thresholds, config.gate_policy, extensions.gate);
        raises UsageError (a bad baseline) before anything is printed or written."""
        if self.baseline_ref and self.baseline is None:
            self.baseline = check_baseline(resolve_report(self.baseline_ref, wh, options, session))
        config = doc.setdefault("config", {})
        if self.policy is not None:
            config["gate_policy"] = self.policy
        mins, maxs = assemble_limits(doc.get("overall", {}), self.mins, self.maxs, self.min_accuracy, self.max_ece)
        config["thresholds"] = {"min": mins, "max": maxs, "baseline_tolerance": self.tolerances}
        con = connect(*engines.of(options))              # the report's engine runs the gate SQL too
        load_report_tables(con, {"candidate": doc, "baseline": self.baseline}, cases=self.policy is not None)
        result = GateResult(failures=check_thresholds(con, mins, maxs))
        if self.baseline_ref:
            result.compare_ok, result.deltas = compare(con, config, doc.get("overall", {}), self.baseline,
                                                       self.tolerances, doc.get("cases"))
            if not result.compare_ok:
                result.failures.append("baseline comparison failed")
            refusal = comparability_failure(config, self.baseline)
            if refusal:
                result.failures.append(refusal)
        measures: List[Dict[str, Any]] = []
        if self.policy is not None:
            policy_failures, measures = check_policy(con, config, self.policy, self.baseline)
            result.failures.extend(policy_failures)
        doc.setdefault("extensions", {})["gate"] = {"deltas": result.deltas, "policy": measures,
                                                    "failures": list(result.failures)}
        result.measures, result.thresholds = measures, {"min": mins, "max": maxs}
        return result


def prepare(request: GateRequest, wh=None, options=None, *, early_baseline: bool = False,
            session=None) -> Optional[Gate]:
    """S6.8 before anything is loaded or run: the policy is validated, a relative policy needs
    --baseline, --tolerance needs --baseline, the pairs parse; the baseline is loaded (and its shape
    checked, S6.4 steps 1-2) now only with a policy or `early_baseline`, for a command that would
    otherwise commit before learning the baseline is bad. None when no gate flag was given. Raises
    UsageError."""
    if not request.active:
        if request.junit or request.summary:
            raise UsageError("--junit and --summary write a gate's verdict: add a gate (--min-accuracy, --max-ece, "
                             "--min, --max, --baseline or --gate-policy)")
        return None
    policy = load_policy(request.policy_path) if request.policy_path else None
    if policy is not None and needs_baseline(policy) and not request.baseline:
        raise UsageError("--gate-policy has a relative rule; pass --baseline")
    gate = Gate(mins=parse_pairs(request.mins, "--min"), maxs=parse_pairs(request.maxs, "--max"),
                min_accuracy=parse_limit("--min-accuracy", request.min_accuracy),
                max_ece=parse_limit("--max-ece", request.max_ece),
                tolerances=parse_pairs(request.tolerances, "--tolerance"), baseline_ref=request.baseline,
                policy=policy, junit=request.junit, summary=request.summary)
    if gate.tolerances and not request.baseline:
        raise UsageError("--tolerance is the allowed drift from --baseline; pass --baseline")
    if request.baseline and (policy is not None or early_baseline):
        gate.baseline = check_baseline(resolve_report(request.baseline, wh, options, session))
    return gate


def compare_documents(document: Dict[str, Any], baseline: Dict[str, Any], tolerances: Dict[str, float],
                      policy: Optional[Dict[str, Any]], options=None) -> GateResult:
    """S6.9: a saved report (or a run's report) against a baseline; no thresholds. The SQL runs on
    the engine of `options` (report.Options; DuckDB without)."""
    check_report(document)
    candidate = {"config": identity_of(document), "overall": document.get("overall", {}),
                 "slices": document.get("slices", {}), "cases": document.get("cases", [])}
    con = connect(*engines.of(options))
    load_report_tables(con, {"candidate": candidate, "baseline": baseline}, cases=policy is not None)
    result = GateResult()
    result.compare_ok, result.deltas = compare(con, candidate["config"], candidate["overall"], baseline, tolerances,
                                               candidate["cases"], written_by_reference(document))
    refusal = comparability_failure(candidate["config"], baseline)
    if refusal:
        result.failures.append(refusal)
    if policy is not None:
        policy_failures, result.measures = check_policy(con, candidate["config"], policy, baseline)
        result.failures.extend(policy_failures)
    return result
