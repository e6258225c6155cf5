"""Console blocks of the README and docs/*.md, run as written (tests/docs/).

A block is a sequence of `$ command` lines, each followed by what it prints (stdout, then stderr, as a
terminal shows a command whose only stderr line comes last). A line `...` in the block stands for any
number of printed lines. What cannot repeat is masked on both sides: timestamps (`12-02 19:06`) and the
values of timing metrics (latency, cost per decision). Runs of spaces and table rules compare as one, so
a column that widens with a timing does not fail the check; every other character must match. Every
command is a `laya-cases` command and exits 0, unless the next step is `$ echo $?`, whose printed line
is the exit code it must have had.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from helpers import ROOT

ECHO_STATUS = "echo $?"
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



def run_console(text: str, cwd: Path, env: Optional[Dict[str, str]] = None) -> None:
    """Run every ```console block of `text` in order in `cwd` (with `data/` linked to the bundled data)
    and assert each command exits as shown and prints what the block shows. `env`: extra variables."""
    if not (cwd / "data").exists():
        (cwd / "data").symlink_to(ROOT / "data")
    bindir = str(Path(sys.executable).parent)
    full = {k: v for k, v in os.environ.items() if not k.startswith("LAYA_CASES_") or k == "LAYA_CASES_CHECK_CACHE"}
    full.update(PATH=bindir + os.pathsep + full.get("PATH", ""), NO_COLOR="1", COLUMNS="100", TERM="dumb",
                HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **(env or {}))
    for steps in console_blocks(text):
        for i, (command, expected) in enumerate(steps):
            if command == ECHO_STATUS:
                continue                                   # checked with the command before it
            assert shlex.split(command)[0] == "laya-cases", command
            proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=full, capture_output=True, text=True)
            follows = steps[i + 1] if i + 1 < len(steps) else None
            status = int(follows[1][0]) if follows and follows[0] == ECHO_STATUS else 0
            assert proc.returncode == status, (command, proc.returncode, proc.stderr)
            got = proc.stdout.splitlines() + proc.stderr.splitlines()
            assert matches(expected, got), "`%s` now prints:\n%s" % (command, "\n".join(got))
