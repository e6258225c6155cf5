"""CLI habits users bring from other tools: -h, --version, shell completion, bare help."""
from __future__ import annotations

import subprocess
import sys

import laya_cases

MAIN = [sys.executable, "-c", "from laya_cases_cli.app import main; main()"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=120)


def test_version_prints_the_package_version():
    result = _run("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, "laya-cases %s\n" % laya_cases.__version__, "")


def test_dash_h_is_help_for_the_app_and_for_a_command():
    top, sub = _run("-h"), _run("report", "-h")
    assert top.returncode == sub.returncode == 0
    assert top.stdout.startswith("Usage: laya-cases [OPTIONS] COMMAND") and "--install-completion" in top.stdout
    assert sub.stdout.startswith("Usage: laya-cases report [OPTIONS]") and "--slice DIM" in sub.stdout


def test_bare_command_prints_the_help_once_and_exits_0():
    result = _run()
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.count("Usage: laya-cases [OPTIONS] COMMAND") == 1
