"""CI-readable gates (laya_cases/gates/ci.py, docs/ci.md): the README's CI recipe with one edited answer
names every failing metric under its FAIL line, writes a JUnit file a JUnit parser reads (one failing case
per failing rule, one per FAIL line) and a step summary that grows per step; docs/ci.md's workflow holds
valid commands."""
from __future__ import annotations

import math
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer

from helpers import ROOT
from laya_cases.gates import ci as gate_ci
from test_config import GATE, lc, project  # noqa: F401  (the README's CI recipe, one answer edited)


@pytest.mark.slow
def test_the_ci_recipe_names_each_failing_metric_and_writes_junit_and_a_summary(project, tmp_path):  # noqa: F811
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "-w", str(tmp_path / "wh"),
                *GATE, "--junit", str(junit), "--summary", str(summary))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    start = lines.index("FAIL: baseline comparison failed")
    details = [x for x in lines[start + 1:] if x.startswith("  ")]
    deltas = [x.split()[0] for x in result.stdout.splitlines() if "baseline=" in x and "(tol" in x]
    failing = [x.split()[0] for x in result.stdout.splitlines()
               if "diff=" in x and abs(float(x.split("diff=")[1].split()[0])) > float(x.split("(tol ")[1][:-1])]
    assert [d.split(":")[0].strip() for d in details] == failing and len(failing) >= 3
    assert any(d.startswith("  choice_accuracy: value 0.8125, baseline 0.8750, diff -0.0625 outside the tolerance "
                            "0.0200") for d in details)
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("tests")) == len(cases) and int(suite.get("failures")) == len(failed)
    names = [c.get("name") for c in failed]
    assert all(any(n.startswith("baseline %s " % m) for n in names) for m in failing) and len(failed) == len(failing)
    assert len([c for c in cases if c.get("classname") == "laya-cases.baseline"]) == len(deltas)
    fail_lines = [x[len("FAIL: "):] for x in lines if x.startswith("FAIL: ") and x != "FAIL: baseline comparison failed"]
    messages = [c.find("failure").get("message") for c in failed]
    assert all(f in messages for f in fail_lines)
    text = summary.read_text()
    assert text.startswith("earlier step\n### laya-cases gate: run ") and "FAIL: %d of %d checks failed" % (
        len(failed), len(cases)) in text
    assert text.count("| FAIL |") == len(failed) and text.count("| ok |") == len(cases) - len(failed)


@pytest.mark.slow
def test_junit_without_a_gate_is_a_usage_error(project, tmp_path):  # noqa: F811
    result = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "-w", str(tmp_path / "wh"),
                "--junit", str(tmp_path / "j.xml"))
    assert result.returncode == 2 and "--junit and --summary write a gate's verdict" in result.stderr
    assert not (tmp_path / "wh").exists() and not (tmp_path / "j.xml").exists()


@pytest.mark.slow
def test_compare_writes_the_files_and_keeps_the_references_stderr(project, tmp_path):  # noqa: F811
    wh = str(tmp_path / "wh")
    assert lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "-w", wh, "--run-id", "c"
              ).returncode == 0
    result = lc(project, "compare", "c", "-w", wh, "--baseline", "eval/baseline.json", "--junit", str(tmp_path / "j.xml"))
    assert result.returncode == 1 and result.stderr == ""
    failed = ET.parse(tmp_path / "j.xml").getroot().findall(".//failure")
    assert any("choice_accuracy: value 0.8125" in f.get("message") for f in failed)


def test_checks_claim_each_fail_line_once_and_keep_the_rest():
    failures = ["metric 'ece' is NaN", "metric 'ece' is NaN", "choice_accuracy=0.5000 is below the minimum 0.8000",
                "baseline comparison failed", "slice gate rule 2 (language=de, choice_accuracy): too few cases",
                "baseline is not comparable: dataset_sha256"]
    deltas = [{"metric": "brier", "status": "pass", "value": 0.1, "baseline": 0.1, "diff": 0.0, "tolerance": 0.0},
              {"metric": "aurc", "status": "fail", "value": 0.3, "baseline": 0.1, "diff": 0.2, "tolerance": 0.0}]
    measures = [{"pos": 1, "dim": "qid", "key": "intent", "metric": "ece", "limit_name": "max", "current": 0.1, "n": 9},
                {"pos": 2, "dim": "language", "key": "de", "metric": "choice_accuracy", "limit_name": "min",
                 "current": math.nan, "n": 1}]
    checks = gate_ci.checks({"min": {"ece": 0.0, "choice_accuracy": 0.8, "noul_accuracy": 0.5}, "max": {"ece": 0.3}},
                            deltas, measures, failures)
    verdicts = [(c["kind"], c["ok"]) for c in checks]
    assert verdicts == [("threshold", False), ("threshold", False), ("threshold", True), ("threshold", False),
                        ("baseline", False), ("baseline", True), ("policy", True), ("policy", False), ("gate", False)]
    assert checks[-1]["detail"] == "baseline is not comparable: dataset_sha256"
    xml = gate_ci.junit(checks, "s <&> \"q\"")
    root = ET.fromstring(xml.encode())
    assert root.find("testsuite").get("name") == "s <&> \"q\"" and len(root.findall(".//failure")) == 6
    assert gate_ci.junit(checks, "x") == gate_ci.junit(checks, "x")


def test_a_boundary_diff_is_shown_with_every_digit():
    d = {"metric": "choice_accuracy", "status": "fail", "value": 0.79, "baseline": 0.8, "diff": 0.79 - 0.8,
         "tolerance": 0.01}
    assert gate_ci.delta_detail(d) == ("choice_accuracy: value 0.79, baseline 0.8, diff -0.010000000000000009 "
                                       "outside the tolerance 0.01")


def test_the_documented_workflow_holds_valid_commands():
    import yaml

    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (workflow,) = re.findall(r"```yaml\n(.*?)```", text, re.S)
    steps = yaml.safe_load(workflow)["jobs"]["gate"]["steps"]
    commands = [line.strip() for s in steps if "run" in s for line in s["run"].replace("\n", " ").split("&&")
                if line.strip().startswith("laya-cases ")]
    assert commands, "the workflow runs laya-cases"
    group = typer.main.get_command(app)
    for command in commands:
        words = shlex.split(command)[1:]
        sub = group.get_command(None, words[0])
        assert sub is not None, command
        sub.make_context(words[0], words[1:])          # an unknown flag or a bad value raises here
    with pytest.raises(Exception, match="No such option"):
        group.get_command(None, "run").make_context("run", ["x.jsonl", "--junitt", "j"])
