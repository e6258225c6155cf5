"""tests/handshake.py, the pipes the kill and concurrency tests synchronise on: a held call stays held
until the kill, a child that exits early fails the wait at once with its stderr, a child whose test is
gone stops instead of waiting forever, and turns interleave in order."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

import handshake

TESTS = Path(__file__).resolve().parents[1]        # where handshake.py is


def child(code: str, env=None) -> subprocess.Popen:
    import os

    return subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, %r)\nimport handshake\n%s"
                             % (str(TESTS), code)], env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_held_call_posts_and_stays_until_killed(tmp_path):
    with handshake.Pipes(tmp_path, "held") as pipes:
        proc = child("for call in (1, 2, 3):\n    print(call, flush=True)\n    handshake.hold(call)\nprint('past')",
                     pipes.hold_env("held", 2))
        pipes.wait("held", 1, proc, "call 2")
        assert proc.stdout.readline() == "1\n" and proc.stdout.readline() == "2\n"
        assert proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
    assert proc.returncode == -signal.SIGKILL and "past" not in out


def test_an_early_exit_fails_the_wait_with_its_stderr(tmp_path):
    with handshake.Pipes(tmp_path, "held") as pipes:
        proc = child("raise SystemExit('no such run')")
        with pytest.raises(AssertionError, match="rc 1.*no such run"):
            pipes.wait("held", 1, proc, "call 2")


def test_a_child_whose_test_is_gone_stops(tmp_path):
    pipes = handshake.Pipes(tmp_path, "go")
    proc = child("handshake.take(%r)" % pipes.path("go"))
    pipes.close()                        # the test's end: the child's read returns, it does not hang
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "the test is gone" in err


def test_turns_interleave_in_order(tmp_path):
    log = tmp_path / "log"
    with handshake.Pipes(tmp_path / "p", "a", "b", "c") as pipes:
        envs = handshake.turns(pipes, "abc")
        procs = [child("for _ in range(3):\n    handshake.my_turn()\n    open(%r, 'a').write(%r)\n"
                       "    handshake.next_turn()" % (str(log), name), envs[name]) for name in "cba"]
        pipes.post("a")
        assert [p.wait(60) for p in procs] == [0, 0, 0]
    assert log.read_text() == "abc" * 3
