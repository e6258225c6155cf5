"""One run loop. `run`, one shard of a run, `massive run`, `robustness` and `presentation` all commit through
laya_cases.run.execute, each a Job (run/job.py) with its hooks. Each is killed mid-run and resumed here,
all through the same code path. A `Killed` BaseException from the runner at its N-th call stands in for
the kill: no --on-error rule or language rule catches it. Chunks were committed before the kill. The
resumed run equals an uninterrupted one: every decision row, the config and the settings. The second
process asks the runner only for the calls that were not committed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from doubles import FakeClock, LogitsDouble
from resume_double import ResumeDouble, write_dataset
from laya_cases.harness.massive.harness import Harness, run_harness
from laya_cases.harness.presentation import harness as presentation
from laya_cases.harness.robustness.execute import RobustnessOptions, execute as robustness
from laya_cases.query.sql import connect
from laya_cases.run.execute import execute
from laya_cases.run.job import Job
from laya_cases.run.options import RunOptions
from laya_cases.runners.base import Runner
from laya_cases.store import shards
from laya_cases.store.check import check
from laya_cases.store.warehouse import Warehouse

WORK = ["run", "shard", "massive", "robustness", "presentation"]


class Killed(BaseException):
    """The process dies here."""


class KillAt(Runner):
    """Passes calls to `inner` and dies at call `at` (None: never)."""

    def __init__(self, inner: Runner, at: Any = None):
        self.inner, self.at, self.calls = inner, at, 0
        self.name, self.capabilities, self.info = inner.name, inner.capabilities, inner.info

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == self.at:
            raise Killed()
        return self.inner.predict_batch(states, questions, **kwargs)


def _massive_folder(tmp_path: Path) -> Path:
    """A tiny MASSIVE-format test split in two locales (fields id, locale, text, label)."""
    folder = tmp_path / "massive"
    folder.mkdir()
    labels = ["alarm_set", "audio_volume_mute", "iot_hue_lightoff", "play_music", "weather_query"]
    for locale in ("en-US", "de-DE"):
        with open(folder / ("%s.jsonl" % locale), "w", encoding="utf-8") as handle:
            for i in range(9):
                handle.write(json.dumps({"id": str(i), "locale": locale, "text": "%s utterance %d" % (locale, i % 7),
                                         "label": labels[i % 5]}) + "\n")
    return folder


def _robustness_dataset(tmp_path: Path) -> Path:
    """One choice question per row, three languages in turn (each its own instructions, so no call mixes
    two), repeated states (case ids `#n`); row 5, in `de`, fails (BOOM) in the first pass, so that
    language fails before the kill and must stay failed after the resume."""
    criteria = {"refund": "money back", "cancel": "stop the order", "other": "anything else"}
    path = tmp_path / "rob.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(12):
            lang = ["en", "de", "fr"][i // 4]
            state = "BOOM" if i == 5 else ("same words" if i % 5 == 2 else "row %d" % i)
            question = {"type": "choice", "instructions": "Intent (%s)?" % lang, "criteria": criteria}
            handle.write(json.dumps({"state": state, "language": lang, "questions": {"intent": question},
                                     "expected": {"intent": list(criteria)[i % 3]}}) + "\n")
    return path


def _work(kind: str, tmp_path: Path) -> Callable[..., Any]:
    """kind -> start(wh, runner, clock, resume): one attempt at the run `r`."""
    if kind in ("run", "shard"):
        ds = write_dataset(tmp_path / "ds.jsonl", 30)
        shard = (1, 1) if kind == "shard" else None
        return lambda wh, runner, clock, resume: execute(
            wh, RunOptions(str(ds), run_id="r", batch_size=3, on_error="skip", commit_every=4, shard=shard,
                           resume=resume and shard is None), runner=runner, clock=clock)
    if kind == "massive":
        folder = _massive_folder(tmp_path)
        return lambda wh, runner, clock, resume: run_harness(
            wh, RunOptions("", run_id="r", batch_size=2, commit_every=3, resume=resume),
            Harness(langs=["en", "de"], per_lang=6, n_opts=4, data=folder), runner=runner, clock=clock)
    if kind == "robustness":
        ds = _robustness_dataset(tmp_path)
        return lambda wh, runner, clock, resume: robustness(
            wh, RobustnessOptions(str(ds), run_id="r", batch_size=2, commit_every=5, resume=resume),
            runner=runner, clock=clock)
    return lambda wh, runner, clock, resume: presentation.execute(
        wh, run_id="r", runner=runner, clock=clock, resume=resume, commit_every=3)


def _runner(kind: str, clock: FakeClock, at: Any = None) -> KillAt:
    return KillAt(LogitsDouble(clock) if kind == "presentation" else ResumeDouble(clock=clock), at)


def _committed_calls(wh: Warehouse, kind: str) -> int:
    entry = shards.records(wh, "r")[1] if kind == "shard" else json.loads(wh.progress_file("r").read_text())
    return json.loads(entry["run"]["config_json"])["timing"]["chunks"]


def _stored(wh: Warehouse) -> tuple:
    """Every decision row (variants too) and the run's config and settings, without the run id and time."""
    con = connect(wh, ["r"], variants=True)
    rows = con.execute("SELECT * EXCLUDE (run_id) FROM decisions ORDER BY ALL").fetchall()
    config, settings = con.execute("SELECT config_json, settings_json FROM runs").fetchone()
    return rows, json.loads(config), json.loads(settings)


@pytest.mark.parametrize("kind", WORK)
def test_killed_midway_then_resumed_through_the_one_loop(tmp_path, monkeypatch, kind):
    jobs: List[str] = []
    real_run = Job.run

    def spy(self, *args, **kwargs):
        jobs.append(type(self).__name__)
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Job, "run", spy)
    start = _work(kind, tmp_path)

    whole = Warehouse(tmp_path / "whole")
    clock = FakeClock()
    reference = _runner(kind, clock)
    start(whole, reference, clock, False)

    wh = Warehouse(tmp_path / "wh")
    clock = FakeClock()
    with pytest.raises(Killed):
        start(wh, _runner(kind, clock, at=5), clock, False)
    assert wh.run_ids() == [] and check(wh) == []
    committed = _committed_calls(wh, kind)
    assert 0 < committed < 5 <= reference.calls

    clock = FakeClock()
    resumed = _runner(kind, clock)
    start(wh, resumed, clock, True)
    assert wh.run_ids() == ["r"] and check(wh) == []
    assert resumed.calls == reference.calls - committed             # only what was not committed
    assert _stored(wh) == _stored(whole)
    expected = {"run": "Job", "shard": "Job", "massive": "MassiveJob", "robustness": "RobustnessJob",
                "presentation": "PresentationJob"}[kind]
    assert jobs == [expected] * 3                                     # every attempt ran Job.run


def test_a_resumed_robustness_run_keeps_its_failed_language(tmp_path):
    start = _work("robustness", tmp_path)
    wh = Warehouse(tmp_path / "wh")
    clock = FakeClock()
    with pytest.raises(Killed):
        start(wh, _runner("robustness", clock, at=7), clock, False)
    clock = FakeClock()
    start(wh, _runner("robustness", clock), clock, True)
    _rows, config, _settings = _stored(wh)
    assert list(config["robustness"]["failed_languages"]) == ["de"]
    con = connect(wh, ["r"], variants=True)
    parents = con.execute("SELECT count(*) FROM decisions WHERE variant <> 'baseline' AND parent_case_id IS NULL"
                          ).fetchone()[0]
    assert parents == 0
