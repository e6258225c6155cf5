"""Gates on `report` and `ingest` (issue: gates; spec S6.1-S6.3, S6.5-S6.8, T6.2, S9.2).

Every expected line is either quoted from the spec or produced by the reference's own functions
(`laya.evals_cli._parse_pairs`, `_check_thresholds`, `laya._eval_policy.load_policy`,
`check_policy`) on the same inputs; ours must be identical apart from the `laya-cases:` prefix.
Commands run in-process through typer's CliRunner.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from flip_data import rows as flip_rows, write as write_rows
from helpers import T62_RULES, fixture_rows, snapshot_tree, write_jsonl
from laya_cases.core.errors import UsageError
from laya_cases.gates import runner as G
from laya_cases_cli.app import app

from laya import _eval_policy, evals, evals_cli  # the reference (dev extra)


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def usage_error(result) -> str:
    """Exit 2 with exactly one `laya-cases:` line on stderr; returns the message.

    `run` first says where it committed the run (an evaluation already happened, S6.8); that
    notice is not part of the error."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    lines = [l for l in result.stderr.splitlines() if not l.startswith("laya-cases: committed run ")]
    assert len(lines) == 1 and lines[0].startswith("laya-cases: "), result.stderr
    return lines[0][len("laya-cases: "):]


def fail_lines(result) -> List[str]:
    return [line[len("FAIL: "):] for line in result.stderr.splitlines() if line.startswith("FAIL: ")]


@pytest.fixture(scope="module")
def ties(tmp_path_factory) -> Dict[str, Any]:
    """Run `ties` from T3.1's records (no dataset file: a programmatic-like report, no dataset_sha256)."""
    base = tmp_path_factory.mktemp("ties")
    wh = base / "wh"
    answers = write_jsonl(base / "ties.answers.jsonl", fixture_rows("ties.json"))
    assert invoke("ingest", answers, "-w", wh, "--run-id", "ties").exit_code == 0
    assert invoke("report", "ties", "-w", wh, "--json", base / "ties.json").exit_code == 0
    return {"base": base, "wh": wh, "doc": json.loads((base / "ties.json").read_text())}


T62_EXPECTED = [
    "slice gate: baseline and candidate need dataset_sha256 identity",
    "slice gate rule 1 (language=en, choice_accuracy): candidate=0.5000 (n=4), min=0.6000 failed",
    "slice gate rule 2 (language=en, choice_accuracy): candidate count 4 is below min_count 5",
    "slice gate rule 3 (qid=urgency, ece): metric or slice is missing",
    "slice gate rule 5 (language=en, choice_accuracy): candidate=0.5000 (n=4), baseline=0.7500 (n=4), "
    "max_drop=0.2000 exceeded by 0.0500",
    "slice gate rule 7 (language=en, ece): candidate count 6 is below min_count 7",
]


def t62_files(ties) -> Dict[str, Path]:
    base = ties["base"]
    baseline = copy.deepcopy(ties["doc"])
    baseline["overall"]["choice_accuracy"] = 0.7
    baseline["slices"]["language"]["en"]["choice_accuracy"] = 0.75
    (base / "t62.baseline.json").write_text(json.dumps(baseline))
    (base / "t62.policy.json").write_text(json.dumps({"version": 1, "rules": T62_RULES}))
    return {"baseline": base / "t62.baseline.json", "policy": base / "t62.policy.json"}


@pytest.mark.slow
def test_t6_2_policy_on_ties_exact_lines_and_exit_1(ties):
    files = t62_files(ties)
    out = ties["base"] / "t62.report.json"
    result = invoke("report", "ties", "-w", ties["wh"], "--baseline", files["baseline"], "--tolerance",
                    "choice_accuracy=0.05", "--gate-policy", files["policy"], "--json", out)
    assert result.exit_code == 1, result.stderr
    assert fail_lines(result) == T62_EXPECTED                # the overall compare and comparability pass
    assert "choice_accuracy    baseline=0.7000 value=0.6667 diff=-0.0333 (tol 0.0500)" in result.stdout.splitlines()
    doc = json.loads(out.read_text())
    assert doc["config"]["gate_policy"] == {"version": 1, "rules": T62_RULES}          # S6.5: recorded
    assert doc["config"]["thresholds"] == {"min": {}, "max": {}, "baseline_tolerance": {"choice_accuracy": 0.05}}
    measures = {m["pos"]: m for m in doc["extensions"]["gate"]["policy"]}             # S9.2: counts published
    assert (measures[4]["n"], measures[4]["base_n"], measures[4]["drift"], measures[4]["failure"]) == (4, 4, 0.25, None)
    assert measures[6]["n"] == 6 and measures[6]["failure"] is None


def test_t6_2_policy_equals_reference_check_policy(ties):
    """The same documents through the reference's check_policy give the same failure list."""
    files = t62_files(ties)
    baseline = json.loads(files["baseline"].read_text())
    policy = json.loads(files["policy"].read_text())
    doc = ties["doc"]
    reference = _eval_policy.check_policy(evals.EvalReport(config=doc["config"], overall=doc["overall"],
                                                           slices=doc["slices"], cases=doc["cases"]),
                                          policy, baseline)
    con = G.connect()
    G.load_report_tables(con, {"candidate": doc, "baseline": baseline})
    ours, _ = G.check_policy(con, doc["config"], G.load_policy(str(files["policy"])), baseline)
    assert ours == reference == T62_EXPECTED


@pytest.mark.parametrize("pairs", [["acc"], ["=0.5"], ["acc="], ["acc=nan"], ["acc=inf"], ["acc=1e999"], ["acc=x"],
                                   ["acc=-inf"], [" acc =0.5", "b=1", " acc =0.25"]])
def test_pairs_parse_as_the_reference_s6_1(pairs):
    try:
        expected = evals_cli._parse_pairs(pairs)
    except evals.EvalError as exc:
        with pytest.raises(UsageError) as ours:
            G.parse_pairs(pairs)
        assert str(ours.value) == str(exc)
    else:
        assert G.parse_pairs(pairs) == expected
        assert list(G.parse_pairs(pairs)) == list(expected)          # a later duplicate keeps the position


BAD_POLICIES = [
    "not json", "[]", json.dumps({"version": 1}), json.dumps({"version": 1, "rules": [], "x": 1}),
    json.dumps({"version": "1", "rules": [1]}), json.dumps({"version": 1.0, "rules": [1]}),
    json.dumps({"version": True, "rules": [1]}), json.dumps({"version": 1, "rules": []}),
    json.dumps({"version": 1, "rules": {}}), json.dumps({"version": 1, "rules": [1]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "min": 1, "max": 2}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "min": 1, "x": 0}]}),
    json.dumps({"version": 1, "rules": [{"metric": "m", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"row": "a"}, "metric": "m", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": " "}, "metric": "m", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": 1}, "metric": "m", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a", "tag": "b"}, "metric": "m", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "", "min_count": 1, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1.0, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": True, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 0, "min": 1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "min": True}]}),
    '{"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "max": NaN}]}',
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "max_drop": -0.1}]}),
    json.dumps({"version": 1, "rules": [{"slice": {"qid": "a"}, "metric": "m", "min_count": 1, "max_increase": "1"}]}),
    "[" * 100000,
]


@pytest.mark.parametrize("text", BAD_POLICIES)
def test_policy_validation_as_the_reference_s6_5(tmp_path, text):
    path = tmp_path / "policy.json"
    path.write_text(text)
    with pytest.raises(evals.EvalError) as reference:
        _eval_policy.load_policy(str(path))
    with pytest.raises(UsageError) as ours:
        G.load_policy(str(path))
    expected = str(reference.value)          # the reference's S6.5 text, after the file's name (issue 15)
    assert str(ours.value) == (expected if expected.startswith("invalid gate policy") else "%s: %s" % (path, expected))


@pytest.mark.parametrize("rule, message", [
    ({"min": 0.5, "significant_at": 0.05}, "significant_at must be a number in (0, 1) on a max_drop or max_increase rule"),
    ({"max_drop": 0.0, "significant_at": 1.0}, "significant_at must be a number in (0, 1)"),
    ({"max_drop": 0.0, "significant_at": True}, "significant_at must be a number in (0, 1)"),
    ({"max_drop": 0.0, "significant_at": 0.05, "metric": "ece"}, "significant_at needs a per-case 0/1 metric"),
])
def test_significant_at_is_validated_up_front(tmp_path, rule, message):
    body = {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, **rule}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"version": 1, "rules": [body]}))
    with pytest.raises(UsageError, match=r"policy.json: gate policy rule 1 ") as ours:
        G.load_policy(str(path))
    assert message in str(ours.value)


def test_threshold_lines_equal_the_reference_s6_3(ties):
    """Mins in order, then maxs; absent metric; inclusive bounds; --min-accuracy/--max-ece assembled (S6.2)."""
    result = invoke("report", "ties", "-w", ties["wh"], "--min", "ece=0.3", "--min", "latency_p50_ms=1",
                    "--min-accuracy", "0.7", "--max", "brier=0.1", "--max-ece", "0.2888888888888889",
                    "--max", "aurc=0.2", "--min", "noul_accuracy=0.6666666666666666")
    overall = ties["doc"]["overall"]
    mins = {"ece": 0.3, "latency_p50_ms": 1.0, "noul_accuracy": 0.6666666666666666, "choice_accuracy": 0.7}
    maxs = {"brier": 0.1, "ece": 0.2888888888888889, "aurc": 0.2}
    expected = evals_cli._check_thresholds(overall, mins, maxs)
    assert expected == ["ece=0.2889 is below the minimum 0.3000", "metric 'latency_p50_ms' is not in the report",
                        "choice_accuracy=0.6667 is below the minimum 0.7000", "brier=0.1844 is above the maximum 0.1000",
                        "aurc=0.2021 is above the maximum 0.2000"]
    assert result.exit_code == 1
    assert fail_lines(result) == expected
    assert result.stdout.splitlines()[0].startswith("aurc ")         # the report is printed before FAIL lines


@pytest.mark.slow
def test_min_accuracy_names_noul_accuracy_without_choice_s6_2(tmp_path):
    rows = [r for r in fixture_rows("ties.json") if "spam" in r["expected"] or "urgency" in r["expected"]]
    only_score = [r for r in rows if "urgency" in r["expected"]]
    wh = tmp_path / "wh"
    assert invoke("ingest", write_jsonl(tmp_path / "n.jsonl", rows), "-w", wh, "--run-id", "noul").exit_code == 0
    assert invoke("ingest", write_jsonl(tmp_path / "s.jsonl", only_score), "-w", wh, "--run-id", "score").exit_code == 0
    result = invoke("report", "noul", "-w", wh, "--min-accuracy", "0.7", "--json", tmp_path / "r.json")
    assert fail_lines(result) == ["noul_accuracy=0.6667 is below the minimum 0.7000"]
    assert json.loads((tmp_path / "r.json").read_text())["config"]["thresholds"]["min"] == {"noul_accuracy": 0.7}
    result = invoke("report", "score", "-w", wh, "--min-accuracy", "0.1")
    assert (result.exit_code, fail_lines(result)) == (1, ["metric 'noul_accuracy' is not in the report"])


@pytest.mark.slow
def test_nan_metric_fails_and_ms_metrics_are_not_exempt_s6_3(tmp_path):
    rows = [{"state": i, "questions": {"q": {"type": "choice", "instructions": "q", "criteria": ["a", "b"]}},
             "expected": {"q": "a"}, "latency_ms": 10.0 * (i + 1),
             "answers": {"q": {"type": "choice", "choice": "a", "answer_confidence": float("nan") if i == 0 else 0.9}}}
            for i in range(3)]
    path = tmp_path / "nan.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))             # json writes the NaN token
    wh = tmp_path / "wh"
    assert invoke("ingest", path, "-w", wh, "--run-id", "nan").exit_code == 0
    result = invoke("report", "nan", "-w", wh, "--min", "mean_confidence=0.1", "--max", "latency_p95_ms=25")
    assert fail_lines(result) == ["metric 'mean_confidence' is NaN", "latency_p95_ms=30.0000 is above the maximum 25.0000"]
    assert invoke("report", "nan", "-w", wh, "--max", "latency_p95_ms=30").exit_code == 0      # inclusive


@pytest.mark.slow
def test_passing_gate_exits_0_and_stored_config_is_not_rewritten(ties):
    out = ties["base"] / "pass.json"
    result = invoke("report", "ties", "-w", ties["wh"], "--min-accuracy", "0.6", "--max-ece", "0.3", "--json", out)
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(out.read_text())["config"]["thresholds"] == {
        "min": {"choice_accuracy": 0.6}, "max": {"ece": 0.3}, "baseline_tolerance": {}}
    plain = ties["base"] / "plain.json"
    assert invoke("report", "ties", "-w", ties["wh"], "--json", plain).exit_code == 0
    config = json.loads(plain.read_text())["config"]
    # the empty block the reference writes without a gate, not the last gate's limits (S0.2, S6.2)
    assert config["thresholds"] == {"min": {}, "max": {}, "baseline_tolerance": {}} and "gate_policy" not in config
    assert "gate" not in json.loads(plain.read_text())["extensions"]


@pytest.mark.parametrize("args, needle", [
    (["--min", "ece"], "expected NAME=VALUE, got 'ece'"),
    (["--tolerance", "ece=x"], "'x' is not a number in 'ece=x'"),
    (["--max-ece", "inf"], "--max-ece: 'inf' is not a number"),
    (["--min-accuracy", "abc"], "--min-accuracy: 'abc' is not a number"),
    (["--gate-policy", "{missing}"], "invalid gate policy"),
    (["--gate-policy", "{relative}"], "--gate-policy has a relative rule; pass --baseline"),
    (["--baseline", "{missing}"], "cannot read report"),
    (["--baseline", "no-such-run"], "no such file, and no run with that id"),
    (["--baseline", "{bare_config}"], "baseline metric 'config' is not a number, got dict"),
    (["--baseline", "{empty}"], "baseline has no metrics to compare, so nothing in it could fail"),
])
def test_usage_errors_exit_2_one_line_nothing_written_s6_7(ties, tmp_path, args, needle):
    files = {"missing": tmp_path / "missing.json", "relative": tmp_path / "relative.json",
             "bare_config": tmp_path / "bare.json", "empty": tmp_path / "empty.json"}
    files["relative"].write_text(json.dumps({"version": 1, "rules": [T62_RULES[3]]}))
    files["bare_config"].write_text(json.dumps({"choice_accuracy": 0.5, "config": {}}))
    files["empty"].write_text(json.dumps({"overall": {}}))
    args = [a.format(**files) for a in args]
    out = tmp_path / "out.json"
    result = invoke("report", "ties", "-w", ties["wh"], "--json", out, *args)
    assert needle in usage_error(result)
    assert result.stdout == "" and not out.exists()          # S6.8: a bad baseline exits before any file


def test_unknown_run_id_with_gate_flags_exit_2(ties):
    assert "unknown run id 'nope'" in usage_error(invoke("report", "nope", "-w", ties["wh"], "--min-accuracy", "0.5"))


def test_ingest_gate_usage_errors_leave_the_store_untouched(ties, tmp_path):
    answers = write_jsonl(tmp_path / "a.jsonl", fixture_rows("ties.json"))
    policy = tmp_path / "bad.json"
    policy.write_text('{"version": 2, "rules": []}')
    before = snapshot_tree(ties["wh"])
    for args in (["--tolerance", "ece"], ["--gate-policy", policy], ["--baseline", "nope"],
                 ["--baseline", tmp_path / "none.json"], ["--min", "x=nan"]):
        usage_error(invoke("ingest", answers, "-w", ties["wh"], "--run-id", "gated", *args))
        assert snapshot_tree(ties["wh"]) == before


@pytest.mark.slow
def test_ingest_gate_prints_run_id_then_report_and_exits_by_verdict(ties, tmp_path):
    answers = write_jsonl(tmp_path / "a.jsonl", fixture_rows("ties.json"))
    ok = invoke("ingest", answers, "-w", ties["wh"], "--run-id", "ok-gate", "--baseline", "ties")
    assert (ok.exit_code, ok.stderr) == (0, "")
    lines = ok.stdout.splitlines()
    assert lines[0] == "ok-gate" and any(line.startswith("choice_accuracy    baseline=0.6667") for line in lines)
    bad = invoke("ingest", answers, "-w", ties["wh"], "--run-id", "bad-gate", "--max-ece", "0.1")
    assert bad.exit_code == 1 and fail_lines(bad) == ["ece=0.2889 is above the maximum 0.1000"]
    assert bad.stdout.splitlines()[0] == "bad-gate"                      # the run is committed all the same


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Dict[str, Any]:
    """Runs `a` and `b` of one dataset file (same dataset_sha256) and `many`: en intent cases that go wrong."""
    base = tmp_path_factory.mktemp("pair")
    wh = base / "wh"
    dataset = write_rows(base / "ds.jsonl", flip_rows(), answers=False)
    few = {("intent", 1), ("intent", 2)}                      # en: two right->wrong
    many = {("intent", i) for i in range(1, 40) if i % 3 and i % 5}                 # en, right in a
    for run_id, flips in (("a", set()), ("b", few), ("many", many)):
        answers = write_rows(base / ("%s.jsonl" % run_id), flip_rows(flips=flips))
        assert invoke("ingest", answers, "--dataset", dataset, "-w", wh, "--run-id", run_id).exit_code == 0
    assert invoke("report", "a", "-w", wh, "--json", base / "a.json").exit_code == 0
    return {"base": base, "wh": wh, "many": len(many)}


def policy_file(base: Path, **rule) -> Path:
    body = {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1}
    body.update(rule)
    if not set(body) & set(G.LIMITS):
        body["max_drop"] = 0.0
    path = base / ("policy-%d.json" % abs(hash(json.dumps(rule, sort_keys=True))))
    path.write_text(json.dumps({"version": 1, "rules": [body]}))
    return path


LOOSE = [arg for m in ("choice_accuracy", "aurc", "brier", "ece", "mean_confidence", "selective_accuracy@50",
                       "selective_accuracy@80") for arg in ("--tolerance", "%s=1" % m)]


@pytest.mark.slow
def test_significant_at_fails_only_a_significant_drop(pair):
    """The extension rule: max_drop exceeded AND exact McNemar p < significant_at (S9)."""
    from scipy.stats import binomtest

    wh, base = pair["wh"], pair["base"]
    significant = policy_file(base, significant_at=0.05)
    many = invoke("report", "many", "-w", wh, "--baseline", base / "a.json", *LOOSE, "--gate-policy", significant)
    lines = fail_lines(many)
    assert many.exit_code == 1 and len(lines) == 1, many.stderr
    p = binomtest(0, pair["many"], 0.5).pvalue
    assert lines[0].startswith("slice gate rule 1 (language=en, choice_accuracy): candidate=")
    assert lines[0].endswith("(McNemar p=%.4g < significant_at=0.05; %d right->wrong, 0 wrong->right)" % (p, pair["many"]))
    # two cases lost: the drop exceeds max_drop 0, but p = 0.5 -> the significant rule passes, the plain one fails
    few = invoke("report", "b", "-w", wh, "--baseline", "a", *LOOSE, "--gate-policy", significant)
    assert (few.exit_code, fail_lines(few)) == (0, []), few.stderr
    plain = invoke("report", "b", "-w", wh, "--baseline", "a", *LOOSE, "--gate-policy", policy_file(base))
    assert plain.exit_code == 1 and "max_drop=0.0000 exceeded by" in fail_lines(plain)[0]


def test_significant_at_refuses_unpairable_cases(pair, tmp_path):
    baseline = json.loads((pair["base"] / "a.json").read_text())
    baseline["cases"] = baseline["cases"][1:]                 # positions no longer line up
    baseline["slices"]["language"]["en"]["choice_accuracy"] = 1.0
    path = tmp_path / "shifted.json"
    path.write_text(json.dumps(baseline))
    result = invoke("report", "b", "-w", pair["wh"], "--baseline", path, "--tolerance", "choice_accuracy=1",
                    "--gate-policy", policy_file(tmp_path, significant_at=0.5))
    assert any("significant_at needs the two runs' cases paired by position, but" in line for line in fail_lines(result))


def test_relative_coverage_rule_refused_across_definitions_s6_6(pair, tmp_path):
    baseline = json.loads((pair["base"] / "a.json").read_text())
    del baseline["config"]["coverage_metric_definition"]
    path = tmp_path / "def1.json"
    path.write_text(json.dumps(baseline))
    policy = policy_file(tmp_path, metric="aurc", max_increase=0.5)
    result = invoke("report", "a", "-w", pair["wh"], "--baseline", path, "--gate-policy", policy)
    assert "slice gate rule 1 (language=en, aurc): the baseline says 1 (unrecorded), but a coverage cut here is " \
           "definition 2 -- regenerate it before comparing a coverage metric on a relative limit" in fail_lines(result)


@pytest.fixture
def exploding_runner():
    from doubles import ExplodingRunnerDouble
    from laya_cases.runners import registry

    registry.register(ExplodingRunnerDouble.name, ExplodingRunnerDouble)
    yield ExplodingRunnerDouble.name
    registry.unregister(ExplodingRunnerDouble.name)


def test_run_gates_in_s6_8_order(tmp_path, exploding_runner):
    """`run` takes the gate flags: a bad policy stops before the model runs (nothing committed); a bad
    baseline without a policy stops after evaluation and before any report file; errored cases fail
    the policy (S6.6 step 1); a threshold failure exits 1 after the report is written."""
    from helpers import SPEC_FIXTURES
    from laya_cases.store.warehouse import Warehouse

    ds = SPEC_FIXTURES / "ds_batch.jsonl"
    wh = tmp_path / "wh"
    out = tmp_path / "r.json"
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"qid": "intent"}, "metric": "choice_accuracy", "min_count": 1, "min": 0.0}]}))
    base = ["run", ds, "--model", exploding_runner, "--on-error", "skip", "-w", wh, "--json", out]
    assert "invalid gate policy" in usage_error(invoke(*base, "--gate-policy", tmp_path / "none.json"))
    assert Warehouse(wh).run_ids() == []
    assert "cannot read report" in usage_error(invoke(*base, "--run-id", "r1", "--baseline", tmp_path / "none.json"))
    assert Warehouse(wh).run_ids() == ["r1"] and not out.exists()
    result = invoke(*base, "--run-id", "r2", "--gate-policy", policy, "--min-accuracy", "0.8")
    assert result.exit_code == 1 and out.exists()
    assert fail_lines(result) == ["choice_accuracy=0.7500 is below the minimum 0.8000",
                                  "slice gate: candidate has skipped/errored cases"]
    assert json.loads(out.read_text())["config"]["gate_policy"]["version"] == 1


@pytest.mark.parametrize("limit, fails", [(0.1, False), (0.09999999, True)])
def test_relative_limit_isclose_is_the_only_epsilon_s6_6(limit, fails):
    """drift = 0.8 - 0.7 = 0.10000000000000009 in binary64: above 0.1, yet isclose(rel 1e-12) passes it."""
    def doc(value):
        return {"config": {"schema": "s", "dataset_sha256": "d", "questions_sha256": "q"},
                "slices": {"language": {"en": {"choice_accuracy": value}}},
                "cases": [{"qid": "q", "language": "en", "scores": {"choice_accuracy": 1.0}}]}
    policy = {"version": 1, "rules": [{"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1,
                                       "max_drop": limit}]}
    candidate, baseline = doc(0.7), doc(0.8)
    reference = _eval_policy.check_policy(evals.EvalReport(config=candidate["config"], slices=candidate["slices"],
                                                           cases=candidate["cases"]), policy, baseline)
    con = G.connect()
    G.load_report_tables(con, {"candidate": candidate, "baseline": baseline})
    ours, measures = G.check_policy(con, candidate["config"], policy, baseline)
    assert ours == reference and bool(ours) == fails
    assert measures[0]["drift"] == 0.8 - 0.7


def test_a_long_policy_path_keeps_its_file_name(tmp_path):
    """A path is whole in the message up to 200 characters, else its end: the file's name is never cut."""
    from laya_cases.core.errors import shorten_path

    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True)
    path = deep / "policy.json"
    path.write_text("[]")
    with pytest.raises(UsageError) as ours:
        G.load_policy(str(path))
    message = str(ours.value)
    assert message.startswith("...") and "e/policy.json (%d characters): " % len(str(path)) in message
    assert len(message.split(": ", 1)[0]) < 230
    assert shorten_path(str(tmp_path)) == str(tmp_path)
