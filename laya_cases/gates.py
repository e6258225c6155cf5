"""Gates (spec S5.5-S5.7, S6): thresholds, baseline compare, comparability and the slice policy.

A gate is a query that returns the rows that violate it: `sql/gates/thresholds.sql`,
`sql/gates/policy.sql` (over `policy_measures.sql`) and `sql/compare/overall_deltas.sql` run over
small tables loaded from the candidate report and the baseline document:

    gate_metrics(side, dim, key, metric, value)   every numeric metric of overall and slices
    gate_cases(side, case_no, qid, paired)         one row per case, in report order
    gate_case_keys(side, case_no, dim, key)        the slice groups a case is in (S4.1)
    gate_case_scores(side, case_no, metric, score) its finite per-case scores

What stays in Python is procedural by nature: NAME=VALUE parsing (S6.1), assembling the limits
(S6.2), validating the policy file and the baseline's shape (S6.4 steps 1-3, S6.5), the identity
checks (S5.6, S5.7) and turning each violation row into the reference's failure line. Nothing
here prints; the CLI does.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import duckdb
import pyarrow as pa

from . import UsageError
from . import sql as Q

IDENTITY_KEYS = ("schema", "dataset_sha256", "questions_sha256")
IDENTITY_LABELS = {"schema": "report schema", "dataset_sha256": "dataset bytes",
                   "questions_sha256": "question schema"}
TOURNAMENT_SCHEMA = "laya-tournament-evals-report/1"
COVERAGE_METRIC_DEFINITION = 2
DIMENSIONS = ("language", "model", "qid", "tag")
LIMITS = ("min", "max", "max_drop", "max_increase")
RELATIVE = ("max_drop", "max_increase")
#: laya-cases' policy extension: a relative rule with `"significant_at": ALPHA` fails only when the
#: drift exceeds its limit *and* the exact McNemar test on the slice's paired cases gives p < ALPHA.
SIGNIFICANT_AT = "significant_at"


# ------------------------------------------------------------------------------- inputs (S6.1, S6.2)
def finite_number(value: Any) -> bool:
    """An int or float (never a bool) that is finite, as the reference's policy checks read it."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def parse_pairs(pairs: Optional[Sequence[str]]) -> Dict[str, float]:
    """S6.1: `NAME=VALUE` pairs (--min, --max, --tolerance); later duplicates win, keeping position."""
    out: Dict[str, float] = {}
    for pair in pairs or []:
        name, _, raw = pair.partition("=")
        if not name or not raw:
            raise UsageError("expected NAME=VALUE, got %r" % pair)
        try:
            number = float(raw)
        except ValueError:
            raise UsageError("%r is not a number in %r" % (raw, pair)) from None
        if not math.isfinite(number):          # a non-finite limit would disable the gate it names
            raise UsageError("%r is not a number in %r" % (raw, pair))
        out[name.strip()] = number
    return out


def parse_limit(flag: str, raw: Optional[str]) -> Optional[float]:
    """--min-accuracy / --max-ece: one finite number (S6.1)."""
    if raw is None:
        return None
    try:
        number = float(raw)
    except ValueError:
        raise UsageError("%s: %r is not a number" % (flag, raw)) from None
    if not math.isfinite(number):
        raise UsageError("%s: %r is not a number" % (flag, raw))
    return number


def assemble_limits(overall: Dict[str, Any], mins: Dict[str, float], maxs: Dict[str, float],
                    min_accuracy: Optional[float], max_ece: Optional[float]) -> Tuple[Dict[str, float], Dict[str, float]]:
    """S6.2: --min-accuracy names choice_accuracy when the report has it, else noul_accuracy."""
    mins, maxs = dict(mins), dict(maxs)
    if min_accuracy is not None:
        mins["choice_accuracy" if "choice_accuracy" in overall else "noul_accuracy"] = min_accuracy
    if max_ece is not None:
        maxs["ece"] = max_ece
    return mins, maxs


# ------------------------------------------------------------------------------- policy file (S6.5)
def _read_json(path: str, failure: str) -> Any:
    """A JSON file the user named; unreadable, undecodable or too deep is `failure % (path, reason)`."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        raise UsageError(failure % (path, exc)) from None


def load_policy(path: str) -> Dict[str, Any]:
    """Read and validate a gate policy before anything is loaded or run; raises UsageError."""
    policy = _read_json(path, "invalid gate policy %r: %s")
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
        if (set(rule) - {"slice", "metric", "min_count", SIGNIFICANT_AT} - set(LIMITS)
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
        name = next(iter(limits))
        if not finite_number(rule[name]) or (name in RELATIVE and rule[name] < 0):
            raise UsageError("%s %s must be finite%s" % (where, name, " and non-negative" if name in RELATIVE else ""))
        if SIGNIFICANT_AT in rule:
            _check_significance(where, rule, name)
    return policy


def _check_significance(where: str, rule: Dict[str, Any], limit: str) -> None:
    alpha = rule[SIGNIFICANT_AT]
    if limit not in RELATIVE or not finite_number(alpha) or not 0 < alpha < 1:
        raise UsageError("%s %s must be a number in (0, 1) on a max_drop or max_increase rule" % (where, SIGNIFICANT_AT))
    metric = rule["metric"]
    if metric not in ("choice_accuracy", "noul_accuracy") and not metric.startswith("score_within_"):
        raise UsageError("%s %s needs a per-case 0/1 metric (choice_accuracy, noul_accuracy or score_within_*), "
                         "got %r" % (where, SIGNIFICANT_AT, metric))


def needs_baseline(policy: Dict[str, Any]) -> bool:
    return any(set(rule) & set(RELATIVE) for rule in policy["rules"])


# ------------------------------------------------------------------------------- documents and identity (S5)
def load_document(path: str) -> Dict[str, Any]:
    document = _read_json(path, "cannot read report %r: %s")
    if not isinstance(document, dict):
        raise UsageError("cannot read report %r: expected a JSON object, found %s" % (path, type(document).__name__))
    return document


def resolve_report(ref: str, wh=None, options=None) -> Dict[str, Any]:
    """A report JSON file, else a run id in the warehouse (its report is built from the store)."""
    from . import report as R
    from .warehouse import validate_run_id

    try:
        run_id = validate_run_id(ref)
    except UsageError:                            # a path, not a run id: the file's own error
        run_id = None
    if wh is None or run_id is None or os.path.exists(ref):
        return load_document(ref)
    if not wh.has_run(run_id):
        raise UsageError("cannot read report %r: no such file, and no run with that id in warehouse %s" % (ref, wh.root))
    # only what a baseline compares: the published metrics (score_within adds some) and the cases
    return R.build(wh.connect([ref]), ref, R.Options(score_within=getattr(options, "score_within", ())))


def identity_of(document: Any) -> Dict[str, Any]:
    """S5.6: the document's config, with identity keys missing there read from its top level."""
    if not isinstance(document, dict):
        return {}
    config = document.get("config")
    found = dict(config) if isinstance(config, dict) else {}
    for key in IDENTITY_KEYS:
        if found.get(key) is None and document.get(key) is not None:
            found[key] = document[key]
    return found


def comparability_reasons(config: Dict[str, Any], baseline: Any) -> List[str]:
    """S5.7: identity keys present on both sides that differ, each naming both values."""
    other = identity_of(baseline)
    reasons = []
    for key in IDENTITY_KEYS:
        here, there = config.get(key), other.get(key)
        if here is None or there is None or here == there:
            continue
        reasons.append("%s (%s): baseline is %s, this run is %s" % (key, IDENTITY_LABELS[key], there, here))
    if config.get("schema") == other.get("schema") == TOURNAMENT_SCHEMA:
        here, there = config.get("tournament_group_size"), other.get("tournament_group_size")
        if here is None or there is None or here != there:
            reasons.append("tournament group size: baseline is %s, this run is %s" % (there, here))
    return reasons


def comparability_failure(config: Dict[str, Any], baseline: Any) -> Optional[str]:
    reasons = comparability_reasons(config, baseline)
    return "baseline is not comparable: " + "; ".join(reasons) if reasons else None


def _shown_definition(recorded: Any) -> str:
    if recorded is None:
        return "1 (unrecorded)"
    shown = repr(recorded)
    return shown if len(shown) <= 40 else shown[:40] + "... (truncated)"


def coverage_definition_conflict(config: Any, baseline: Any) -> Optional[str]:
    """S6.4 (c): why a coverage metric must not be compared across these two documents, or None."""
    here = config.get("coverage_metric_definition") if isinstance(config, dict) else None
    base_config = baseline.get("config") if isinstance(baseline, dict) else None
    there = base_config.get("coverage_metric_definition") if isinstance(base_config, dict) else None
    if here == COVERAGE_METRIC_DEFINITION and there == COVERAGE_METRIC_DEFINITION:
        return None
    stale = []
    if here != COVERAGE_METRIC_DEFINITION:
        stale.append("this report says %s" % _shown_definition(here))
    if there != COVERAGE_METRIC_DEFINITION:
        stale.append("the baseline says %s" % _shown_definition(there))
    return ("%s, but a coverage cut here is definition %s -- regenerate it before comparing a coverage metric"
            % (" and ".join(stale), COVERAGE_METRIC_DEFINITION))


def is_coverage_metric(name: str) -> bool:
    return name == "aurc" or name.startswith("selective_accuracy@")


def metric_map(values: Any, label: str, *, allow_empty: bool = False) -> Dict[str, Any]:
    """S6.4 step 2: an object of numbers (bools refused); empty only on the candidate's side."""
    if not isinstance(values, dict):
        raise UsageError("%s metrics must be an object of metric name to number, got %s" % (label, type(values).__name__))
    if not values and not allow_empty:
        raise UsageError("%s has no metrics to compare, so nothing in it could fail" % label)
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError("%s metric %r is not a number, got %s" % (label, name, type(value).__name__))
    return values


def tolerance_map(tolerances: Any) -> Dict[str, Any]:
    """S6.4 step 3: numbers; +inf refused; NaN and negatives accepted (they always fail)."""
    if tolerances is None:
        return {}
    if not isinstance(tolerances, dict):
        raise UsageError("tolerances must be an object of metric name to number, got %s" % type(tolerances).__name__)
    for name, value in tolerances.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError("tolerance for %r is not a number, got %s" % (name, type(value).__name__))
        if math.isinf(value) and value > 0:
            raise UsageError("tolerance for %r is Infinity, so it accepts a drift of any size" % name)
    return tolerances


# ------------------------------------------------------------------------------- tables
def _float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:                     # an integer beyond binary64
        return math.inf if value > 0 else -math.inf


def _register(con: duckdb.DuckDBPyConnection, name: str, columns: Dict[str, Tuple[pa.DataType, List[Any]]]) -> None:
    table = pa.table({col: pa.array(values, type=kind) for col, (kind, values) in columns.items()})
    con.register(name, table)


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    Q.prepare_connection(con)
    return con


def load_report_tables(con: duckdb.DuckDBPyConnection, sides: Dict[str, Optional[Dict[str, Any]]], *,
                       cases: bool = True) -> None:
    """Flatten report-shaped documents ({"overall", "slices", "cases"}) into the gate tables.

    Only int/float values are metrics (a bool is not); NaN and infinities are kept so a query can
    say so. Slice keys are Python str() of case values (S4.1), a tag group counted once per case.
    Only the policy reads the case tables: `cases=False` leaves them empty.
    """
    m = {"side": [], "dim": [], "key": [], "metric": [], "value": []}
    c = {"side": [], "case_no": [], "qid": [], "paired": []}
    k = {"side": [], "case_no": [], "dim": [], "key": []}
    s = {"side": [], "case_no": [], "metric": [], "score": []}

    def metric(side, dim, key, name, value):
        if type(value) in (int, float):
            for col, v in zip(("side", "dim", "key", "metric", "value"), (side, dim, key, name, _float(value))):
                m[col].append(v)

    for side, doc in sides.items():
        if not isinstance(doc, dict):
            continue
        overall = doc.get("overall")
        for name, value in (overall.items() if isinstance(overall, dict) else ()):
            metric(side, "overall", "", name, value)
        slices = doc.get("slices")
        for dim in DIMENSIONS:
            groups = slices.get(dim) if isinstance(slices, dict) else None
            for key, group in (groups.items() if isinstance(groups, dict) else ()):
                for name, value in (group.items() if isinstance(group, dict) else ()):
                    metric(side, dim, key, name, value)
        listed = doc.get("cases") if cases else None
        for no, case in enumerate(listed if isinstance(listed, list) else []):
            if not isinstance(case, dict):
                c["side"].append(side), c["case_no"].append(no), c["qid"].append(None), c["paired"].append(False)
                continue
            qid = case.get("qid")
            c["side"].append(side), c["case_no"].append(no)
            c["qid"].append(None if qid is None else str(qid))
            c["paired"].append(finite_number(case.get("confidence")) and isinstance(case.get("correct"), bool))
            for dim in DIMENSIONS:
                if dim == "tag":
                    tags = case.get("tags")
                    keys = {str(t) for t in (tags if isinstance(tags, (list, tuple)) else []) if t is not None}
                else:
                    keys = set() if case.get(dim) is None else {str(case.get(dim))}
                for key in sorted(keys):
                    k["side"].append(side), k["case_no"].append(no), k["dim"].append(dim), k["key"].append(key)
            scores = case.get("scores")
            for name, score in (scores.items() if isinstance(scores, dict) else ()):
                if finite_number(score):
                    s["side"].append(side), s["case_no"].append(no), s["metric"].append(name)
                    s["score"].append(float(score))
    S, D, I, B = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    _register(con, "gate_metrics", {"side": (S, m["side"]), "dim": (S, m["dim"]), "key": (S, m["key"]),
                                    "metric": (S, m["metric"]), "value": (D, m["value"])})
    _register(con, "gate_cases", {"side": (S, c["side"]), "case_no": (I, c["case_no"]), "qid": (S, c["qid"]),
                                  "paired": (B, c["paired"])})
    _register(con, "gate_case_keys", {"side": (S, k["side"]), "case_no": (I, k["case_no"]), "dim": (S, k["dim"]),
                                      "key": (S, k["key"])})
    _register(con, "gate_case_scores", {"side": (S, s["side"]), "case_no": (I, s["case_no"]),
                                        "metric": (S, s["metric"]), "score": (D, s["score"])})


# ------------------------------------------------------------------------------- thresholds (S6.3)
_THRESHOLD_LINES = {
    "missing": lambda r: "metric %r is not in the report" % r["metric"],
    "nan": lambda r: "metric %r is NaN" % r["metric"],
    "below": lambda r: "%s=%.4f is below the minimum %.4f" % (r["metric"], r["value"], r["bound"]),
    "above": lambda r: "%s=%.4f is above the maximum %.4f" % (r["metric"], r["value"], r["bound"]),
}


def check_thresholds(con: duckdb.DuckDBPyConnection, mins: Dict[str, float], maxs: Dict[str, float]) -> List[str]:
    """S6.3 over the candidate's overall metrics already in `gate_metrics`."""
    limits = [("min", name, bound) for name, bound in mins.items()] + [("max", name, bound) for name, bound in maxs.items()]
    _register(con, "gate_limits", {"pos": (pa.int64(), list(range(1, len(limits) + 1))),
                                   "kind": (pa.string(), [x[0] for x in limits]),
                                   "metric": (pa.string(), [x[1] for x in limits]),
                                   "bound": (pa.float64(), [float(x[2]) for x in limits])})
    return [_THRESHOLD_LINES[row["failure"]](row) for row in Q.rows(Q.query(con, "gates/thresholds.sql"))]


# ------------------------------------------------------------------------------- baseline compare (S6.4)
ORDER_DEPENDENT = ("ece", "brier", "aurc")


def reference_order_values(cases: Optional[Sequence[Dict[str, Any]]]) -> Dict[str, float]:
    """ece, brier and aurc exactly as laya-evals computes them: its own functions, over the paired
    cases in case order (row, then `expected` order, S4.4).

    Ours are exactly rounded sums (S9.8), so they are the same under any row order; the reference's
    are numpy pairwise means in case order, which can differ from ours in the last bit. Against a
    baseline written by the reference, a gate with tolerance 0 (S6.4) must not fail on that bit, so
    this one comparison reads these three the reference's way. Empty when laya is not installed.
    """
    try:
        from laya import evals
    except ImportError:
        return {}
    paired = [(c["confidence"], c["correct"]) for c in cases or ()
              if isinstance(c, dict) and c.get("confidence") is not None and c.get("correct") is not None]
    if not paired:
        return {}
    confs, corrects = [p[0] for p in paired], [p[1] for p in paired]
    out = {}
    for name, fn in (("ece", evals.ece), ("brier", evals.brier), ("aurc", evals.aurc)):
        value = fn(confs, corrects)
        if value is not None and not math.isnan(value):
            out[name] = float(value)
    return out


def written_by_reference(baseline: Any) -> bool:
    """A report laya-cases writes always has `extensions` (S9.1); laya-evals' and bare maps never do."""
    return isinstance(baseline, dict) and "extensions" not in baseline


def compare(con: duckdb.DuckDBPyConnection, config: Dict[str, Any], overall: Any, baseline: Any,
            tolerances: Optional[Dict[str, float]],
            cases: Optional[Sequence[Dict[str, Any]]] = None) -> Tuple[bool, List[Dict[str, Any]]]:
    """S6.4 over `gate_metrics` (candidate side): (ok, delta rows sorted by metric).

    Against a reference-written baseline the candidate's ece/brier/aurc are read in the reference's
    summation order (`reference_order_values`), so an unchanged run compares exactly."""
    if not isinstance(baseline, dict):
        raise UsageError("baseline report must be a JSON object, got %s" % type(baseline).__name__)
    ref: Dict[str, float] = {}
    if written_by_reference(baseline) and isinstance(overall, dict) and any(m in overall for m in ORDER_DEPENDENT):
        ref = {m: v for m, v in reference_order_values(cases).items() if m in overall}
    _register(con, "cmp_reference_order", {"metric": (pa.string(), list(ref)),
                                           "value": (pa.float64(), list(ref.values()))})
    base = metric_map(baseline.get("overall", baseline), "baseline")
    metric_map(overall, "report", allow_empty=True)
    tolerances = tolerance_map(tolerances)
    _register(con, "cmp_baseline", {"pos": (pa.int64(), list(range(1, len(base) + 1))),
                                    "metric": (pa.string(), list(base)),
                                    "value": (pa.float64(), [_float(v) for v in base.values()])})
    _register(con, "cmp_tolerances", {"metric": (pa.string(), list(tolerances)),
                                      "tolerance": (pa.float64(), [float(v) for v in tolerances.values()])})
    rows = Q.rows(Q.query(con, "compare/overall_deltas.sql",
                          {"coverage_conflict": coverage_definition_conflict(config, baseline)}))
    return all(r["status"] == "pass" for r in rows), rows


def delta_lines(deltas: Sequence[Dict[str, Any]]) -> List[str]:
    """S6.4: one line per compared metric, sorted by metric."""
    lines = []
    for d in sorted(deltas, key=lambda r: r["metric"]):
        value = math.nan if d["value"] is None else d["value"]
        if d["status"] == "missing":
            lines.append("%-18s baseline=%.4f missing from the report" % (d["metric"], d["baseline"]))
        elif d["status"] == "incomparable":
            lines.append("%-18s baseline=%.4f value=%.4f not compared: %s" % (d["metric"], d["baseline"], value, d["reason"]))
        else:
            lines.append("%-18s baseline=%.4f value=%.4f diff=%+.4f (tol %.4f)"
                         % (d["metric"], d["baseline"], value, d["diff"], d["tolerance"]))
    return lines


# ------------------------------------------------------------------------------- slice policy (S6.6)
def _rule_line(row: Dict[str, Any], conflicts: Dict[int, str]) -> str:
    label = "slice gate rule %d (%s=%s, %s)" % (row["pos"], row["dim"], row["key"], row["metric"])
    failure = row["failure"]
    if failure == "missing":
        return "%s: metric or slice is missing" % label
    if failure == "count":
        return "%s: candidate count %d is below min_count %d" % (label, row["n"], row["min_count"])
    if failure in ("min", "max"):
        return "%s: candidate=%.4f (n=%d), %s=%.4f failed" % (label, row["current"], row["n"], failure, row["bound"])
    if failure == "coverage":
        return "%s: %s on a relative limit" % (label, conflicts[row["pos"]])
    if failure == "base_missing":
        return "%s: baseline metric or slice is missing" % label
    if failure == "base_count":
        return "%s: baseline count %d is below min_count %d" % (label, row["base_n"], row["min_count"])
    if failure == "unpaired":
        return ("%s: %s needs the two runs' cases paired by position, but %d position(s) differ"
                % (label, SIGNIFICANT_AT, row["unpaired"]))
    line = ("%s: candidate=%.4f (n=%d), baseline=%.4f (n=%d), %s=%.4f exceeded by %.4f"
            % (label, row["current"], row["n"], row["base_value"], row["base_n"], row["limit_name"], row["bound"],
               row["drift"] - row["bound"]))
    if failure == "significant":
        line += (" (McNemar p=%.4g < %s=%g; %d right->wrong, %d wrong->right)"
                 % (row["p_value"], SIGNIFICANT_AT, row["significant_at"], row["right_to_wrong"], row["wrong_to_right"]))
    return line


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
        if limit in RELATIVE and is_coverage_metric(rule["metric"]):
            conflict = coverage_definition_conflict(config, baseline)
            if conflict is not None:
                conflicts[pos] = conflict
    limit_names = [next(name for name in LIMITS if name in rule) for rule in rules]
    _register(con, "gate_rules", {
        "pos": (pa.int64(), list(range(1, len(rules) + 1))),
        "dim": (pa.string(), [next(iter(r["slice"])) for r in rules]),
        "key": (pa.string(), [next(iter(r["slice"].values())) for r in rules]),
        "metric": (pa.string(), [r["metric"] for r in rules]),
        "min_count": (pa.int64(), [r["min_count"] for r in rules]),
        "limit_name": (pa.string(), limit_names),
        "bound": (pa.float64(), [float(r[name]) for r, name in zip(rules, limit_names)]),
        "coverage_conflict": (pa.string(), [conflicts.get(pos) for pos in range(1, len(rules) + 1)]),
        "significant_at": (pa.float64(), [None if r.get(SIGNIFICANT_AT) is None else float(r[SIGNIFICANT_AT])
                                          for r in rules]),
    })
    Q.materialize(con, "gates/policy_measures.sql", "policy_measures")
    failures += [_rule_line(row, conflicts) for row in Q.rows(Q.query(con, "gates/policy.sql"))]
    measures = Q.rows(con.execute("SELECT * FROM policy_measures ORDER BY pos"))
    return failures, measures


# ------------------------------------------------------------------------------- a gated report (S6.8)
@dataclass
class GateRequest:
    """The gate flags of one command as typed; cli/gates.py declares them once."""

    mins: Sequence[str] = ()
    maxs: Sequence[str] = ()
    min_accuracy: Optional[str] = None
    max_ece: Optional[str] = None
    baseline: Optional[str] = None
    tolerances: Sequence[str] = ()
    policy_path: Optional[str] = None

    @property
    def active(self) -> bool:
        return bool(self.mins or self.maxs or self.min_accuracy is not None or self.max_ece is not None
                    or self.baseline or self.tolerances or self.policy_path)


@dataclass
class GateResult:
    deltas: List[Dict[str, Any]] = field(default_factory=list)
    failures: List[str] = field(default_factory=list)
    compare_ok: bool = True


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

    def judge(self, doc: Dict[str, Any], wh=None, options=None) -> GateResult:
        """S6.8 after evaluation: record thresholds, check them, load the baseline if not yet, compare,
        comparability, policy. Mutates doc (config.thresholds, config.gate_policy, extensions.gate);
        raises UsageError (a bad baseline) before anything is printed or written."""
        if self.baseline_ref and self.baseline is None:
            self.baseline = resolve_report(self.baseline_ref, wh, options)
        config = doc.setdefault("config", {})
        if self.policy is not None:
            config["gate_policy"] = self.policy
        mins, maxs = assemble_limits(doc.get("overall", {}), self.mins, self.maxs, self.min_accuracy, self.max_ece)
        config["thresholds"] = {"min": mins, "max": maxs, "baseline_tolerance": self.tolerances}
        con = connect()
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
        return result


def prepare(request: GateRequest, wh=None, options=None, *, early_baseline: bool = False) -> Optional[Gate]:
    """S6.8 before anything is loaded or run: the policy is validated, a relative policy needs
    --baseline, the pairs parse; the baseline is loaded now only with a policy (or `early_baseline`,
    for a command that would otherwise commit before learning the baseline is bad). None when no
    gate flag was given. Raises UsageError."""
    if not request.active:
        return None
    policy = load_policy(request.policy_path) if request.policy_path else None
    if policy is not None and needs_baseline(policy) and not request.baseline:
        raise UsageError("--gate-policy has a relative rule; pass --baseline")
    gate = Gate(mins=parse_pairs(request.mins), maxs=parse_pairs(request.maxs),
                min_accuracy=parse_limit("--min-accuracy", request.min_accuracy),
                max_ece=parse_limit("--max-ece", request.max_ece),
                tolerances=parse_pairs(request.tolerances), baseline_ref=request.baseline, policy=policy)
    if request.baseline and (policy is not None or early_baseline):
        gate.baseline = resolve_report(request.baseline, wh, options)
    return gate


def compare_documents(document: Dict[str, Any], baseline: Dict[str, Any], tolerances: Dict[str, float],
                      policy: Optional[Dict[str, Any]]) -> GateResult:
    """S6.9: a saved report (or a run's report) against a baseline; no thresholds."""
    candidate = {"config": identity_of(document), "overall": document.get("overall", {}),
                 "slices": document.get("slices", {}), "cases": document.get("cases", [])}
    con = connect()
    load_report_tables(con, {"candidate": candidate, "baseline": baseline}, cases=policy is not None)
    result = GateResult()
    result.compare_ok, result.deltas = compare(con, candidate["config"], candidate["overall"], baseline, tolerances,
                                               candidate["cases"])
    refusal = comparability_failure(candidate["config"], baseline)
    if refusal:
        result.failures.append(refusal)
    if policy is not None:
        result.failures.extend(check_policy(con, candidate["config"], policy, baseline)[0])
    return result
