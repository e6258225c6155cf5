"""The README's test command, which .ci/run runs: a crashed worker ends the run at once and names its test.

pytest-xdist replaces a crashed worker, and under --dist loadfile the replacement can wait forever for work
(pytest-dev/pytest-xdist#784): one segfault in one worker held CI until its 90-minute limit. Here the
command's own flags run a small suite in which one test takes its worker down."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from helpers import ROOT

pytestmark = pytest.mark.slow   # a pytest run with two xdist workers

CRASH = "import os, signal\n\n\ndef test_takes_the_worker_down():\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
PASS = "def test_%d():\n    pass\n"


def readme_test_flags() -> List[str]:
    """The pytest flags of the README's second command, checked to be the line .ci/run runs."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    line = readme.splitlines()[1]
    assert line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines(), ".ci/run runs the README's line"
    words = shlex.split(line)
    return words[words.index("pytest") + 1:]


def test_a_crashed_worker_ends_the_run_and_names_its_test(tmp_path: Path):
    flags = readme_test_flags()
    assert "-n" in flags and flags[flags.index("-n") + 1] == "auto"
    flags[flags.index("-n") + 1] = "2"       # the crash must happen beside another worker with work left
    (tmp_path / "test_a_crash.py").write_text(CRASH)
    for i in range(4):
        (tmp_path / ("test_b%d.py" % i)).write_text("".join(PASS % j for j in range(3)))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")      # not this project's settings
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", *flags, "-p", "no:cacheprovider"],
                              cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the README's test command hung after a worker crashed")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "crashed while running 'test_a_crash.py::test_takes_the_worker_down'" in out, out[-3000:]
