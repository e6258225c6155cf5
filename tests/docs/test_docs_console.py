"""The README's tour is produced by running it: every `console` block, in order, in one fresh directory.

A block is a sequence of `$ command` lines, each followed by what it prints (stdout, then stderr, as a
terminal shows a command whose only stderr line comes last). A line `...` in the block stands for any
number of printed lines. What cannot repeat is masked on both sides: timestamps (`12-02 19:06`) and the
values of timing metrics (latency, cost per decision). Runs of spaces and table rules compare as one, so
a column that widens with a timing does not fail the check; every other character must match.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from helpers import ROOT

README = ROOT / "README.md"
TIMING = re.compile(r"^(\s*(?:latency|cost_per_decision)\w*\s+)[-+0-9.]+(.*)$")
STAMP = re.compile(r"\b\d\d-\d\d \d\d:\d\d\b")


def console_blocks(text: str) -> List[List[Tuple[str, List[str]]]]:
    """Each ```console block as [(command, expected lines)]; a trailing `\\` continues the command."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, re.S):
        steps: List[Tuple[str, List[str]]] = []
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1] + " " + lines[i].strip()
                steps.append((command, []))
            else:
                assert steps, "a console block starts with a `$ ` command: %r" % line
                steps[-1][1].append(line)
            i += 1
        blocks.append(steps)
    return blocks


def normal(line: str) -> str:
    """A printed line with timings and timestamps masked and spacing folded."""
    match = TIMING.match(line)
    if match:
        line = match.group(1) + "<ms>" + re.sub(r"[-+0-9.]+", "<ms>", match.group(2))
    line = STAMP.sub("<time>", line)
    if line and set(line.strip()) <= {"─", "-"}:
        return "<rule>"
    return " ".join(line.split())


def matches(expected: List[str], got: List[str]) -> bool:
    """Whether `got` is `expected` with each `...` line standing for zero or more lines."""
    want = [normal(x) for x in expected]
    have = [normal(x) for x in got]

    def walk(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(have)
        if want[i] == "...":
            return any(walk(i + 1, k) for k in range(j, len(have) + 1))
        return j < len(have) and want[i] == have[j] and walk(i + 1, j + 1)

    return walk(0, 0)


def test_the_matcher_can_fail():
    assert matches(["a", "...", "c"], ["a", "b", "b", "c"]) and matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "c"], ["a", "b"]) and not matches(["a"], ["a", "b"])
    assert matches(["latency_p50_ms  9.8787   16"], ["latency_p50_ms    123.4567   16"])
    assert not matches(["choice_accuracy 0.6875"], ["choice_accuracy 0.6876"])
    assert matches(["minilm  11-29 14:53  onnx"], ["minilm  12-02 19:06  onnx"])


def _section(title: str) -> str:
    return README.read_text(encoding="utf-8").split("\n## %s\n" % title, 1)[1].split("\n## ", 1)[0]


def run_console(text: str, cwd: Path) -> None:
    """Run every ```console block of `text` in order in `cwd` (with `data/` linked to the bundled data)
    and assert each command exits 0 and prints what the block shows."""
    if not (cwd / "data").exists():
        (cwd / "data").symlink_to(ROOT / "data")
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYA_CASES_")}
    env.update(PATH=bindir + os.pathsep + env.get("PATH", ""), NO_COLOR="1", COLUMNS="100", TERM="dumb")
    for steps in console_blocks(text):
        for command, expected in steps:
            assert shlex.split(command)[0] == "laya-cases", command
            proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
            assert proc.returncode == 0, (command, proc.stderr)
            got = proc.stdout.splitlines() + proc.stderr.splitlines()
            assert matches(expected, got), "`%s` now prints:\n%s" % (command, "\n".join(got))


@pytest.mark.slow
def test_the_readme_tour_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    """Runs the real default model, the ONNX export and its INT8 copy, as the README does; then the
    Python section on the store the tour made, whose per-language numbers must be the report's."""
    tour = _section("A five-minute tour")
    blocks = console_blocks(tour)
    assert len(blocks) == 5 and sum(len(b) for b in blocks) == 8
    run_console(tour, tmp_path)
    monkeypatch.chdir(tmp_path)
    (python,) = re.findall(r"```python\n(.*?)```", _section("Python"), re.S)
    namespace: dict = {}
    exec(compile(python, "README.md (Python)", "exec"), namespace)     # noqa: S102
    capsys.readouterr()
    by_language = {row["language_key"]: row["choice_accuracy"] for row in namespace["choice"].group_by(
        "language_key").agg(choice_accuracy=namespace["pl"].col("correct").mean()).collect().to_dicts()}
    report = namespace["wh"].report("minilm", slices=["language"])
    assert by_language == {k: v["choice_accuracy"] for k, v in report["slices"]["language"].items()}
    assert namespace["report"]["overall"]["choice_accuracy"] == report["overall"]["choice_accuracy"] == 0.6875
