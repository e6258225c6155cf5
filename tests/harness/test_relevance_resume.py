"""Resume of the relevance benchmark (issue 10 item 6): SIGKILL mid-pair, re-run, and only what was missing is
redone; the CSVs equal an uninterrupted run's except the timing columns (threshold_sweep.csv byte for byte).

    python tests/harness/test_relevance_resume.py ARGS...    `laya-cases ARGS...` with the slow scorer registered
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: helpers, handshake

import handshake  # noqa: E402
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs  # noqa: E402

LOG_ENV = "RELEVANCE_DOUBLE_LOG"
TIMING = ("duration_seconds", "items_per_second", "throughput_items_per_second", "peak_vram_bytes",
          "throughput_items_per_second_macro", "peak_vram_bytes_max")


class SlowScorer(Runner):
    """Yes score from a digest of the state; logs each call's states; can stop at its N-th call until it is
    killed (tests/handshake.py)."""

    name = "slow-scorer"
    capabilities = Capabilities(question_types=("noul",))

    def __init__(self, **kwargs: Any):
        self.info = RunnerInfo(runner=self.name, model_id="slow", settings={"decision_rule": "digest"})
        self.calls = 0

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any):
        self.calls += 1
        if os.environ.get(LOG_ENV):
            with open(os.environ[LOG_ENV], "a", encoding="utf-8") as handle:
                handle.write(json.dumps(states) + "\n")
        handshake.hold(self.calls)
        out = []
        for state in states:
            yes = hashlib.sha256(json.dumps(state, sort_keys=True).encode()).digest()[0] / 255
            out.append({"answers": {q: answer_from_probs(b, [1 - yes, yes]) for q, b in questions.items()},
                        "facts": {q: {"relevance_score": yes, "no_score": 1 - yes} for q in questions}})
        return out


def main(argv: List[str]) -> None:
    from laya_cases.runners import registry

    registry.register(SlowScorer.name, SlowScorer)
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import main as cli_main

    sys.argv = ["laya-cases", *argv]
    cli_main()


if __name__ == "__main__":
    main(sys.argv[1:])


# ---------------------------------------------------------------------------- the test
import pytest  # noqa: E402

from laya_cases.run.options import RunOptions  # noqa: E402
from laya_cases.harness.relevance import metrics  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow   # benchmark processes killed with SIGKILL and run again

CHUNKED = {"resume", "commit_every"} <= {f.name for f in dataclasses.fields(RunOptions)}


def _write(folder: Path) -> None:
    folder.mkdir(parents=True)
    for lang in ("de", "en"):
        with open(folder / ("%s.jsonl" % lang), "w", encoding="utf-8") as handle:
            for i in range(12):
                handle.write(json.dumps({"id": "%s-%d" % (lang, i), "question_id": "q%d" % (i // 2),
                                         "pair": "p%d" % (i % 2), "question": "%s question %d" % (lang, i // 2),
                                         "sentence": "sentence %d" % i, "label_text": "yes" if i % 2 else "no"})
                             + "\n")


def _cli(args: List[str], env: Dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args], env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _rows(path: Path, drop=TIMING):
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(handle)]


@pytest.mark.skipif(not CHUNKED, reason="this laya-cases has no chunked commits (RunOptions.resume)")
def test_sigkill_mid_pair_then_rerun_finishes_only_what_was_missing(tmp_path):
    data = tmp_path / "data"
    _write(data)
    args = ["relevance", "run", "--data", str(data), "--model", "m", "--runner", "slow-scorer", "--name", "slow",
            "--batch-size", "2", "--commit-every", "4"]
    ref = _cli(args + ["-w", str(tmp_path / "ref")], {})
    assert ref.wait(120) == 0, ref.stderr.read()
    log = tmp_path / "calls.log"
    wh = tmp_path / "wh"
    with handshake.Pipes(tmp_path / "pipes", "held") as pipes:
        proc = _cli(args + ["-w", str(wh)], {LOG_ENV: str(log), **pipes.hold_env("held", 9)})
        try:
            pipes.wait("held", 1, proc, "the 9th call under way")
        finally:
            proc.send_signal(signal.SIGKILL)  # 6 calls of de (complete), the 9th call of en under way
            proc.wait(30)
    store = Warehouse(wh)
    assert (store.run_state("rel-slow-de"), store.run_state("rel-slow-en")) == ("complete", "incomplete")
    first = len(log.read_text().splitlines())
    again = _cli(args + ["-w", str(wh)], {LOG_ENV: str(log)})
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert "de\trel-slow-de\t12\tdone" in out and "en\trel-slow-en\t12\tcommitted" in out
    calls = [json.loads(line) for line in log.read_text().splitlines()[first:]]
    redone = [s["sentence"] for call in calls for s in call]
    assert redone == ["sentence %d" % i for i in range(4, 12)]       # en rows 0-3 were committed, de untouched
    metrics.export(Warehouse(tmp_path / "ref"), [], str(tmp_path / "a"))
    metrics.export(store, [], str(tmp_path / "b"))
    for name in ("threshold_sweep", "aggregates"):
        assert (tmp_path / "a" / ("%s.csv" % name)).read_bytes() == (tmp_path / "b" / ("%s.csv" % name)).read_bytes()
    for name in ("leaderboard", "scoring_summary"):
        assert _rows(tmp_path / "a" / ("%s.csv" % name)) == _rows(tmp_path / "b" / ("%s.csv" % name))
    # items per second over one clock: the resumed part's 8 items over the resumed part's duration (it was all
    # 12 items over the resumed part's duration, a rate no part of the run had)
    facts = json.loads(connect(store, ["rel-slow-en"]).execute("SELECT settings_json FROM runs").fetchone()[0])["relevance"]
    assert facts["items"] == 8
    with open(tmp_path / "b" / "leaderboard.csv", newline="") as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["language"] == "en"]
    assert row["n_items"] == "12" and float(row["items_per_second"]) == round(8 / facts["duration_seconds"], 4)
