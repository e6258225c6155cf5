"""[tool.laya-cases] in pyproject.toml (cli/config.py): the README's CI gate kept next to the code.

The same gate from the file and from flags gives the same exit code and lines; the command line wins over
the file, the environment's warehouse over the file's; a command's own sub-table wins over the top level;
paths are relative to the pyproject.toml, found from a subdirectory; bad files are one line, exit 2.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pytest

from helpers import ROOT
from inprocess import run


GATE = ["--baseline", "eval/baseline.json", "--tolerance", "choice_accuracy=0.02", "--tolerance", "ece=0.02",
        "--gate-policy", "eval/policy.json", "--min-accuracy", "0.8"]
TABLE = """[tool.laya-cases]
baseline = "eval/baseline.json"
tolerance = {choice_accuracy = 0.02, ece = 0.02}
gate-policy = "eval/policy.json"
min-accuracy = 0.8
"""


def lc(cwd: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    """`laya-cases ARGS` in `cwd` without this environment's LAYA_CASES_* variables (plus `env`), run in this
    process through the console entry point (tests/inprocess.py)."""
    unset = {k: None for k in os.environ if k.startswith("LAYA_CASES_")}
    code, out, err = run(list(args), cwd, {**unset, **(env or {})})
    return subprocess.CompletedProcess(list(args), code, out, err)


def stable(text: str) -> List[str]:
    """Output lines without the ones that hold a timing or a fresh run id."""
    return [line for line in text.splitlines() if "_ms" not in line and not line[:4].isdigit()]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """eval/ as the README's CI recipe has it, the baseline from the bundled answers, and answers.jsonl
    with one choice answer edited (the recipe's failing case)."""
    root = tmp_path_factory.mktemp("project")
    (root / "eval").mkdir()
    (root / "eval" / "support.jsonl").write_bytes((ROOT / "data" / "support.jsonl").read_bytes())
    (root / "eval" / "policy.json").write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"language": "de"}, "metric": "choice_accuracy", "min_count": 3, "max_drop": 0.05,
         "significant_at": 0.05},
        {"slice": {"qid": "intent"}, "metric": "ece", "min_count": 10, "max": 0.4}]}))
    answers = str(ROOT / "data" / "support.answers.jsonl")
    assert lc(root, "ingest", answers, "--dataset", "eval/support.jsonl", "-w", "base", "--run-id", "b").returncode == 0
    assert lc(root, "report", "b", "-w", "base", "--json", "eval/baseline.json").returncode == 0
    rows, edited = [], False
    for line in Path(answers).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#") and not edited:
            row = json.loads(line)
            for qid, answer in row["answers"].items():
                if answer.get("type") == "choice" and row["expected"].get(qid) == answer.get("choice"):
                    options = row["questions"][qid]["criteria"]
                    answer["choice"], edited = next(o for o in options if o != answer["choice"]), True
                    break
            line = json.dumps(row)
        rows.append(line)
    (root / "answers.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "sub").mkdir()
    return root


@pytest.mark.slow   # CLI runs
def test_the_gate_from_pyproject_equals_the_gate_from_flags(project, tmp_path):
    flags = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "-w", str(tmp_path / "a"), *GATE)
    assert flags.returncode == 1 and "FAIL: baseline comparison failed" in flags.stderr
    (project / "pyproject.toml").write_text(TABLE + 'warehouse = "wh-config"\n')
    try:
        # from a subdirectory: the file is found upwards, its paths are relative to it
        from_file = lc(project / "sub", "ingest", "../answers.jsonl", "--dataset", "../eval/support.jsonl")
        assert from_file.returncode == 1, from_file.stderr
        assert stable(from_file.stdout) == stable(flags.stdout) and stable(from_file.stderr) == stable(flags.stderr)
        assert (project / "wh-config" / "runs").is_dir() and not (project / "sub" / "wh-config").exists()
        # the command line wins over the file
        lenient = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl",
                     "--baseline", "eval/baseline.json", "--tolerance", "choice_accuracy=0.1", "--tolerance",
                     "ece=0.1", "--tolerance", "aurc=0.1", "--tolerance", "brier=0.1",
                     "--tolerance", "selective_accuracy@80=0.1", "--min-accuracy", "0.5")
        assert lenient.returncode == 0, lenient.stderr
        # the environment's warehouse wins over the file's
        env = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "--run-id", "e",
                 env={"LAYA_CASES_WAREHOUSE": str(tmp_path / "env-wh")})
        assert env.returncode == 1 and (tmp_path / "env-wh" / "runs" / "run_id=e").is_dir()
    finally:
        (project / "pyproject.toml").unlink()


@pytest.mark.slow   # CLI runs
def test_a_command_sub_table_wins_for_that_command_only(project, tmp_path):
    wh = str(tmp_path / "wh")
    assert lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "-w", wh, "--run-id", "r"
              ).returncode == 0
    (project / "pyproject.toml").write_text('[tool.laya-cases]\nmin-accuracy = 0.99\nwarehouse = "%s"\n'
                                            '[tool.laya-cases.report]\nmin-accuracy = 0.5\n' % wh)
    try:
        assert lc(project, "report", "r").returncode == 0                  # its own 0.5
        compare = lc(project, "compare", "r", "--baseline", "eval/baseline.json", "--tolerance", "choice_accuracy=1")
        assert "min-accuracy" not in compare.stderr
        json_out = tmp_path / "r.json"
        assert lc(project, "report", "r", "--json", str(json_out)).returncode == 0
        strict = lc(project, "ingest", "answers.jsonl", "--dataset", "eval/support.jsonl", "--run-id", "s")
        assert strict.returncode == 1 and "0.99" in strict.stderr         # the top level's 0.99
    finally:
        (project / "pyproject.toml").unlink()


@pytest.mark.parametrize("body,needle", [
    ("[tool.laya-cases]\nbogus = 1\n", "unknown key tool.laya-cases.bogus"),
    ("[tool.laya-cases]\nmin-accuracy = \"high\"\n", "tool.laya-cases.min-accuracy must be a number"),
    ("[tool.laya-cases]\nslice = \"language\"\n", "tool.laya-cases.slice must be a list of strings"),
    ("[tool.laya-cases]\ntolerance = [\"ece=0.1\"]\n", "tool.laya-cases.tolerance must be a table of metric = number"),
    ("[tool.laya-cases]\nbootstrap = true\n", "tool.laya-cases.bootstrap must be an integer"),
    ("[tool.laya-cases]\nwarehouse = \"\"\n", "tool.laya-cases.warehouse must be a non-empty string"),
    ("[tool.laya-cases.report]\nnope = 2\n", 'unknown key tool.laya-cases."report".nope'),
    ("[tool.laya-cases\nx = 1\n", "pyproject.toml: "),
    ("[tool]\nlaya-cases = 3\n", "[tool.laya-cases] must be a table"),
])
def test_a_bad_table_is_one_line_and_exit_2(tmp_path, body, needle):
    (tmp_path / "pyproject.toml").write_text(body)
    result = lc(tmp_path, "runs")
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert len(result.stderr.splitlines()) == 1 and needle in result.stderr and "Traceback" not in result.stderr
    assert str(tmp_path / "pyproject.toml") in result.stderr


def test_a_pyproject_without_the_table_changes_nothing(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "laya-cases-user"\n')
    result = lc(tmp_path, "runs")
    assert result.returncode == 0 and result.stdout.startswith("no committed runs in warehouse")
