"""CLI habits users bring from other tools: -h, --version, shell completion, bare help."""
from __future__ import annotations

import subprocess
import sys

import pytest

import laya_cases
from laya_cases.query.sql import connect

MAIN = [sys.executable, "-c", "from laya_cases_cli.app import main; main()"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_version_prints_the_package_version():
    result = _run("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, "laya-cases %s\n" % laya_cases.__version__, "")


@pytest.mark.slow
def test_dash_h_is_help_for_the_app_and_for_a_command():
    top, sub = _run("-h"), _run("report", "-h")
    assert top.returncode == sub.returncode == 0
    assert top.stdout.startswith("Usage: laya-cases [OPTIONS] COMMAND") and "--install-completion" in top.stdout
    assert sub.stdout.startswith("Usage: laya-cases report [OPTIONS]") and "--slice DIM" in sub.stdout


@pytest.mark.slow
def test_bare_command_prints_the_help_once_and_exits_0():
    result = _run()
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.count("Usage: laya-cases [OPTIONS] COMMAND") == 1


def test_run_limit_and_quiet_make_a_scripted_smoke_run(tmp_path):
    """`run --limit N -q`: the first N rows only, and stdout is the run id alone (a named test-double
    runner, so no model loads)."""
    import json

    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401
    from doubles import ExplodingRunnerDouble
    from laya_cases.runners import registry
    from laya_cases.store.warehouse import Warehouse
    from laya_cases_cli.app import app

    registry.register(ExplodingRunnerDouble.name, ExplodingRunnerDouble)
    body = {"type": "choice", "instructions": "Intent?", "criteria": {"refund": "money back", "other": "else"}}
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"state": "money %d" % i, "questions": {"intent": body},
                                        "expected": {"intent": "refund"}}) + "\n" for i in range(6)), encoding="utf-8")
    wh = tmp_path / "wh"
    args = ["run", str(data), "--model", ExplodingRunnerDouble.name, "-w", str(wh)]
    result = CliRunner().invoke(app, [*args, "--limit", "3", "-q", "--run-id", "smoke"])
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == ("smoke\n", "")
    con = connect(Warehouse(wh), ["smoke"])
    assert con.execute("SELECT count(*), max(row_index) FROM cases").fetchone() == (3, 2)
    bad = CliRunner().invoke(app, [*args, "--limit", "0"])
    assert bad.exit_code == 2 and bad.stderr.startswith("laya-cases: --limit must be a positive number of rows")


def test_the_bundled_examples_ship_and_a_missing_copy_names_them(tmp_path, monkeypatch):
    """The help examples' dataset is in the package (laya_cases_data): `dataset examples` writes it where
    the examples expect it, and a missing data/support.jsonl says where the bundled copy is."""
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401
    from helpers import ROOT
    from laya_cases.core import bundled
    from laya_cases_cli.app import app

    assert {"support.jsonl", "support.answers.jsonl", "presentation_states.json"} <= set(bundled.names())
    monkeypatch.chdir(tmp_path)
    missing = CliRunner().invoke(app, ["validate", "data/support.jsonl"])
    assert missing.exit_code == 2 and "a copy ships with laya-cases: " in missing.stderr
    written = CliRunner().invoke(app, ["dataset", "examples"])
    assert written.exit_code == 0 and "data/support.jsonl" in written.stdout.splitlines()
    assert (tmp_path / "data" / "support.jsonl").read_bytes() == (ROOT / "data" / "support.jsonl").read_bytes()
    again = CliRunner().invoke(app, ["validate", "data/support.jsonl"])
    assert again.exit_code == 0 and again.stdout.startswith("16 examples")
