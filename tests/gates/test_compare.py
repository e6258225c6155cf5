"""`laya-cases compare` and baselines (issue: gates; spec S5.5-S5.7, S6.4, S6.9, T6.1).

The baseline of the acceptance test is written by the reference CLI itself: `laya-evals run` on
data/support.jsonl with a stand-in for `laya.Router` that returns the recorded answers (spec
Appendix A). Every other scenario is run through both CLIs, ours and `laya.evals_cli.main`, and
stdout, stderr (prefix aside) and the exit code must be identical.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, last_bit_rows, snapshot_tree, write_jsonl
from laya_cases.gates import runner as G
from laya_cases_cli.app import app

import laya
from laya import evals, evals_cli

DATASET = ROOT / "data" / "support.jsonl"
ANSWERS = ROOT / "data" / "support.answers.jsonl"


def invoke(*args: Any):
    return CliRunner().invoke(app, [str(a) for a in args])


def reference(*args: Any) -> Tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = evals_cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def same_as_reference(ours_args: List[Any], ref_args: List[Any]) -> Any:
    """Run both CLIs; stdout, stderr (prefix swapped) and exit code must be identical, except that our
    usage error may name the file it is about first (issue 15: `laya-cases: FILE: <reference's text>`)."""
    result = invoke(*ours_args)
    code, out, err = reference(*ref_args)
    assert result.exit_code == code, (result.stdout, result.stderr, out, err)
    assert result.stdout == out
    expected = err.replace("laya-evals: ", "laya-cases: ")
    named = {expected.replace("laya-cases: ", "laya-cases: %s: " % a, 1) for a in ours_args} if code == 2 else set()
    assert result.stderr == expected or result.stderr in named
    return result


class StandInRouter:
    """What `laya-evals run` loads instead of a checkpoint: the recorded answers, by state."""

    answers: Dict[str, Any] = {}

    def __init__(self, device=None, preload=False, **pins):
        self.loaded_revisions: Dict[str, Any] = {}

    def resolve(self, name):
        return name

    def predict(self, state, questions, model=None):
        return {"answers": self.answers[json.dumps(state)]}


def recorded(path: Path) -> Dict[str, Any]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return {json.dumps(r["state"]): r["answers"] for r in rows}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Dict[str, Path]:
    base = tmp_path_factory.mktemp("compare")
    wh = base / "wh"
    ref_json = base / "reference.json"
    StandInRouter.answers = recorded(ANSWERS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(laya, "Router", StandInRouter)
        code, _, err = reference("run", DATASET, "--json", ref_json)
    assert code == 0, err
    assert invoke("ingest", ANSWERS, "--dataset", DATASET, "-w", wh, "--run-id", "support").exit_code == 0
    assert invoke("report", "support", "-w", wh, "--json", base / "ours.json").exit_code == 0
    # the same answers over a dataset whose bytes differ (one comment line more)
    other = base / "support-edited.jsonl"
    other.write_text("# edited\n" + DATASET.read_text())
    other_answers = base / "answers-edited.jsonl"
    other_answers.write_text("# edited\n" + ANSWERS.read_text())
    assert invoke("ingest", other_answers, "--dataset", other, "-w", wh, "--run-id", "edited").exit_code == 0
    assert invoke("report", "edited", "-w", wh, "--json", base / "edited.json").exit_code == 0
    return {"base": base, "wh": wh, "reference": ref_json, "ours": base / "ours.json", "edited": base / "edited.json",
            "other": other}


@pytest.mark.slow
def test_reference_written_baseline_passes_at_tolerance_0(store):
    """Acceptance: same dataset, same answers -> every metric both define is equal; exit 0 (S6.4, S5.7)."""
    baseline = json.loads(store["reference"].read_text())
    assert baseline["config"]["dataset_sha256"] and baseline["config"]["laya_version"] == "0.4.15"
    for candidate in ("support", store["ours"]):
        result = invoke("compare", candidate, "-w", store["wh"], "--baseline", store["reference"])
        assert (result.exit_code, result.stderr) == (0, ""), result.stderr
        shared = sorted(m for m in baseline["overall"] if not m.endswith("_ms"))     # *_ms: skipped, S6.4 (a)
        assert [line.split()[0] for line in result.stdout.splitlines()] == shared
        assert all(line.endswith("diff=+0.0000 (tol 0.0000)") for line in result.stdout.splitlines())
    ours = json.loads(store["ours"].read_text())
    con = G.connect()
    G.load_report_tables(con, {"candidate": ours})
    ok, deltas = G.compare(con, ours["config"], ours["overall"], baseline, {})
    assert ok and {d["metric"] for d in deltas} == set(shared) and all(d["diff"] == 0.0 for d in deltas)
    # a gated ingest against it passes too, and the reference accepts ours both ways round (S0.2)
    gated = invoke("ingest", ANSWERS, "--dataset", DATASET, "-w", store["wh"], "--run-id", "gated",
                   "--baseline", store["reference"])
    assert gated.exit_code == 0, gated.stderr
    assert reference("compare", store["ours"], "--baseline", store["reference"])[0] == 0
    assert reference("compare", store["reference"], "--baseline", store["ours"])[0] == 0


@pytest.mark.slow
def test_baseline_from_another_dataset_is_refused_naming_both_sha256(store):
    """S5.7: exit 1, one FAIL line with both dataset_sha256 values."""
    baseline = json.loads(store["reference"].read_text())["config"]["dataset_sha256"]
    mine = json.loads(store["edited"].read_text())["config"]["dataset_sha256"]
    assert mine != baseline
    result = invoke("compare", "edited", "-w", store["wh"], "--baseline", store["reference"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "FAIL: baseline is not comparable: dataset_sha256 (dataset bytes): baseline is %s, this run is %s"
        % (baseline, mine)]
    same_as_reference(["compare", store["edited"], "--baseline", store["reference"]],
                      ["compare", store["edited"], "--baseline", store["reference"]])
    gated = invoke("report", "edited", "-w", store["wh"], "--baseline", "support")       # a run id as BASE
    assert gated.exit_code == 1 and "FAIL: baseline is not comparable: dataset_sha256 (dataset bytes): " \
        "baseline is %s, this run is %s" % (baseline, mine) in gated.stderr.splitlines()


def _write(base: Path, name: str, doc: Any) -> Path:
    path = base / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def scenarios(store) -> Dict[str, Tuple[Path, Path, List[str]]]:
    base = store["base"]
    ours = json.loads(store["ours"].read_text())
    moved = json.loads(store["ours"].read_text())
    moved["overall"]["choice_accuracy"] -= 0.02
    moved["overall"]["ece"] = float("nan")
    del moved["overall"]["brier"]
    stale = json.loads(store["ours"].read_text())
    del stale["config"]["coverage_metric_definition"]
    top_schema = {"schema": "other-schema/1", "overall": ours["overall"], "config": {}}
    policy = _write(base, "policy.json", {"version": 1, "rules": [
        {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.01},
        {"slice": {"qid": "intent"}, "metric": "ece", "min_count": 100, "max": 1.0},
        {"slice": {"tag": "nope"}, "metric": "ece", "min_count": 1, "max": 1.0}]})
    return {
        "moved": (_write(base, "moved.json", moved), store["ours"], ["--tolerance", "choice_accuracy=0.02"]),
        "moved_tol": (_write(base, "moved.json", moved), store["ours"], ["--tolerance", "choice_accuracy=0.019"]),
        "stale_baseline": (store["ours"], _write(base, "stale.json", stale), []),
        "stale_candidate": (_write(base, "stale.json", stale), store["ours"], []),
        "bare_map": (store["ours"], _write(base, "bare.json", {"choice_accuracy": 0.875, "aurc": 0.004}), []),
        "top_level_schema": (store["ours"], _write(base, "top.json", top_schema), []),
        "no_overall": (_write(base, "empty.json", {"config": {}}), store["ours"], []),
        "policy": (store["edited"], store["reference"], ["--gate-policy", policy, "--tolerance", "ece=1e-12"]),
        "negative_tol": (store["ours"], store["reference"], ["--tolerance", "ece=-1"]),
        "nan_tol": (store["ours"], store["reference"], ["--tolerance", "ece=nan"]),
        "bad_tol": (store["ours"], store["reference"], ["--tolerance", "ece"]),
        "unreadable": (_write(base, "broken.json", "{"), store["ours"], []),
        "not_object": (_write(base, "list.json", [1]), store["ours"], []),
        "bool_metric": (store["ours"], _write(base, "bool.json", {"overall": {"choice_accuracy": True}}), []),
        "missing_baseline": (store["ours"], base / "absent.json", []),
    }


@pytest.mark.parametrize("name", ["moved", "moved_tol", "stale_baseline", "stale_candidate", "bare_map",
                                  "top_level_schema", "no_overall", "policy", "negative_tol", "nan_tol", "bad_tol",
                                  "unreadable", "not_object", "bool_metric", "missing_baseline"])
def test_compare_is_the_reference_compare_s6_9(store, name):
    candidate, baseline, extra = scenarios(store)[name]
    result = same_as_reference(["compare", candidate, "-w", store["wh"], "--baseline", baseline, *extra],
                               ["compare", candidate, "--baseline", baseline, *extra])
    assert result.exit_code == {"moved": 1, "moved_tol": 1, "stale_baseline": 1, "stale_candidate": 1,
                                "bare_map": 1, "top_level_schema": 1, "no_overall": 1, "policy": 1,
                                "negative_tol": 1, "nan_tol": 2, "bad_tol": 2, "unreadable": 2, "not_object": 2,
                                "bool_metric": 2, "missing_baseline": 2}[name]


@pytest.mark.parametrize("base_value, value, tol, diff, verdict", [
    (0.80, 0.79, 0.01, -0.010000000000000009, 1), (0.51, 0.50, 0.01, -0.010000000000000009, 1),
    (0.55, 0.50, 0.05, -0.050000000000000044, 1), (0.45, 0.50, 0.05, 0.04999999999999999, 0),
    (0.7, 0.6666666666666666, 0.05, -0.033333333333333326, 0)])
def test_t6_1_float_boundaries(tmp_path, base_value, value, tol, diff, verdict):
    config = {"coverage_metric_definition": 2}
    cand = _write(tmp_path, "c.json", {"config": config, "overall": {"choice_accuracy": value}})
    base = _write(tmp_path, "b.json", {"config": config, "overall": {"choice_accuracy": base_value}})
    result = invoke("compare", cand, "--baseline", base, "--tolerance", "choice_accuracy=%r" % tol,
                    "-w", tmp_path / "wh")
    assert result.exit_code == verdict
    assert result.stdout == "choice_accuracy    baseline=%.4f value=%.4f diff=%+.4f (tol %.4f)\n" % (
        base_value, value, diff, tol)
    con = G.connect()
    G.load_report_tables(con, {"candidate": {"overall": {"choice_accuracy": value}}})
    ok, deltas = G.compare(con, config, {"choice_accuracy": value}, {"config": config,
                           "overall": {"choice_accuracy": base_value}}, {"choice_accuracy": tol})
    assert deltas[0]["diff"] == diff and ok == (verdict == 0)


@pytest.mark.slow
def test_differing_gate_policy_warns_s6_9(store, tmp_path):
    recorded_policy = {"version": 1, "rules": [{"slice": {"qid": "intent"}, "metric": "ece", "min_count": 1, "max": 1}]}
    gated = tmp_path / "gated.json"
    policy = _write(tmp_path, "p1.json", recorded_policy)
    assert invoke("report", "support", "-w", store["wh"], "--gate-policy", policy, "--json", gated).exit_code == 0
    other = _write(tmp_path, "p2.json", {"version": 1, "rules": [dict(recorded_policy["rules"][0], max=0.9)]})
    result = same_as_reference(["compare", gated, "-w", store["wh"], "--baseline", store["reference"], "--gate-policy", other],
                               ["compare", gated, "--baseline", store["reference"], "--gate-policy", other])
    assert result.stderr.startswith("laya-cases: warning: --gate-policy differs from the report's recorded gate_policy")
    assert "warning" not in invoke("compare", gated, "-w", store["wh"], "--baseline", store["reference"],
                                   "--gate-policy", policy).stderr


def test_unknown_run_id_and_bad_policy_exit_2_nothing_written(store, tmp_path):
    before = snapshot_tree(store["wh"])
    for args in (["compare", "no-such-run", "--baseline", store["reference"]],
                 ["compare", "support", "--baseline", "no-such-run"],
                 ["compare", "support", "--baseline", store["reference"], "--gate-policy", tmp_path / "none.json"],
                 ["compare", "support", "--baseline", store["reference"], "--tolerance", "ece=inf"]):
        result = invoke(*args, "-w", store["wh"])
        assert result.exit_code == 2 and result.stdout == ""
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("laya-cases: ")
    assert snapshot_tree(store["wh"]) == before


def test_identity_reads_top_level_keys_s5_6():
    assert G.identity_of({"schema": "s", "config": {"schema": None, "x": 1}}) == {"schema": "s", "x": 1}
    assert G.identity_of([]) == {} and G.identity_of({"config": 3}) == {}
    reasons = G.comparability_reasons({"schema": "laya-tournament-evals-report/1", "tournament_group_size": 4},
                                      {"schema": "laya-tournament-evals-report/1", "config": {"tournament_group_size": 8}})
    assert reasons == ["tournament group size: baseline is 8, this run is 4"]
    report = evals.EvalReport(config={"schema": "laya-tournament-evals-report/1", "tournament_group_size": 4})
    assert report.comparable_to({"schema": "laya-tournament-evals-report/1",
                                 "config": {"tournament_group_size": 8}}) == (False, reasons)


@pytest.mark.slow
def test_reference_baseline_on_order_dependent_sums_still_passes_at_tolerance_0(tmp_path):
    """Our ece/brier/aurc are exactly rounded sums (S9.8); the reference's are pairwise means in case
    order and can differ in the last bit. Against a laya-evals baseline of the same answers, compare
    reads those three the reference's way, so tolerance 0 passes (issue acceptance, S6.4 (e))."""
    rows = last_bit_rows()
    dataset = write_jsonl(tmp_path / "ds.jsonl", [{k: r[k] for k in ("state", "questions", "expected")} for r in rows])
    answers = write_jsonl(tmp_path / "answers.jsonl", rows)
    StandInRouter.answers = {json.dumps(r["state"]): r["answers"] for r in rows}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(laya, "Router", StandInRouter)
        code, _, err = reference("run", dataset, "--json", tmp_path / "ref.json")
    assert code == 0, err
    wh = tmp_path / "wh"
    assert invoke("ingest", answers, "--dataset", dataset, "-w", wh, "--run-id", "r").exit_code == 0
    assert invoke("report", "r", "-w", wh, "--json", tmp_path / "ours.json").exit_code == 0
    ours, ref = json.loads((tmp_path / "ours.json").read_text()), json.loads((tmp_path / "ref.json").read_text())
    moved = [m for m in G.order_dependent() if ours["overall"][m] != ref["overall"][m]]
    assert moved, "this data must exercise a last-bit difference"             # else the test proves nothing
    assert all(abs(ours["overall"][m] - ref["overall"][m]) < 1e-12 for m in moved)
    # ours against theirs and theirs against ours, as a run id and as report files: all pass at tolerance 0
    for candidate, baseline in (("r", "ref.json"), ("ours.json", "ref.json"), ("ref.json", "ours.json"),
                                ("ref.json", "r")):
        path = (lambda name: name if name == "r" else tmp_path / name)
        result = invoke("compare", path(candidate), "-w", wh, "--baseline", path(baseline))
        assert (result.exit_code, result.stderr) == (0, ""), (candidate, baseline, result.stdout)
        assert all(l.endswith("diff=+0.0000 (tol 0.0000)") for l in result.stdout.splitlines()), result.stdout
    # the reference's compare sums its own way on both sides and so fails at its default tolerance 0, with
    # every delta printed as +0.0000 (or -0.0000); 1e-9 on the three (docs/report.md) passes
    for candidate, baseline in (("ours.json", "ref.json"), ("ref.json", "ours.json")):
        args = ["compare", tmp_path / candidate, "--baseline", tmp_path / baseline]
        code, out, _ = reference(*args)
        assert code == 1 and all("diff=+0.0000" in l or "diff=-0.0000" in l for l in out.splitlines()), out
        assert reference(*args, *[a for m in ("ece", "brier", "aurc") for a in ("--tolerance", m + "=1e-9")])[0] == 0
    # between two laya-cases reports nothing is re-read: our own values compare exactly
    assert invoke("compare", "r", "-w", wh, "--baseline", tmp_path / "ours.json").exit_code == 0
    # and a moved baseline still fails in the reverse direction: the re-read replaces only exact equals' bits
    moved = json.loads((tmp_path / "ours.json").read_text())
    moved["cases"][0]["confidence"] = 0.99 if moved["cases"][0]["confidence"] != 0.99 else 0.5
    (tmp_path / "moved.json").write_text(json.dumps(moved))
    assert invoke("compare", tmp_path / "ref.json", "-w", wh, "--baseline", tmp_path / "moved.json").exit_code == 1
