"""Ctrl-C during `run` (issue 27 item 11): exit 130 and one stderr line saying what stays and how to go on.

The runner double holds its N-th call until the test sends SIGINT (tests/handshake.py), so the interrupt
lands exactly there: after three committed chunks the line names the run and `--resume`; in the first
chunk it says nothing was written, and the store holds nothing.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

import handshake
from helpers import ROOT
from resume_double import LOG_ENV, write_dataset
from laya_cases.store.warehouse import Warehouse

DOUBLE = str(ROOT / "tests" / "resume_double.py")


@pytest.mark.parametrize("call,committed", [pytest.param(11, True, id="after-chunks"),
                                            pytest.param(2, False, id="first-chunk", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_sigint_mid_run_says_what_stays_and_how_to_continue(tmp_path, call, committed):
    ds = write_dataset(tmp_path / "ds.jsonl", 60)
    wh = Warehouse(tmp_path / "wh")
    args = [str(ds), "--model", "resume-double", "--batch-size", "2", "--on-error", "skip", "-w", str(wh.root),
            "--run-id", "k", "--commit-every", "6"]
    with handshake.Pipes(tmp_path / "pipes", "held") as pipes:
        proc = subprocess.Popen([sys.executable, DOUBLE, "run", *args], cwd=str(ROOT), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, LOG_ENV: str(tmp_path / "log"), **pipes.hold_env("held", call)})
        try:
            pipes.wait("held", 1, proc, "call %d" % call)
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate()
    assert proc.returncode == 130 and out == "", err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, lines
    if committed:
        assert lines[0].startswith("laya-cases: interrupted: ") and "--resume k" in lines[0]
        assert wh.run_state("k") == "incomplete"
    else:
        assert lines[0] == "laya-cases: interrupted before the first chunk was committed: nothing was written"
        assert wh.run_state("k") is None and wh.run_ids() == []
