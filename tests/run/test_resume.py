"""Chunked commits and `laya-cases run --resume` (issue 10 item 6; the store promises of issue 15).

A run commits its decisions in chunks as it goes (laya_cases/store/progress.py, docs/schema.md "Runs
committed in chunks"). These tests check that a chunked run equals a one-shot run row for row,
that an interrupted run (a runner crash, an interrupt, SIGKILL) resumes calling the runner only for
the rows not committed and ends equal to an uninterrupted run, that a resume of another dataset,
model or option is refused naming the difference, how an incomplete run reads (`runs`, `report`,
gates, `gc`, `check`, third-party readers), and that a kill at every rename of every commit step
leaves nothing torn or half-visible.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import handshake
from doubles import FakeClock
from helpers import ROOT, snapshot_tree
from resume_double import LOG_ENV, ResumeDouble, write_dataset

from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.run.execute import execute
from laya_cases.run.inference import RunnerCrash, chunks, signature
from laya_cases.run.options import RunOptions
from laya_cases.runners import registry
from laya_cases.store.check import check
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

DOUBLE = str(ROOT / "tests" / "resume_double.py")


# ---------------------------------------------------------------------------- helpers
def _run(wh: Warehouse, ds: Path, run_id: str, **kw: Any) -> ResumeDouble:
    clock = FakeClock()
    runner = ResumeDouble(clock=clock, fail_at=kw.pop("fail_at", None))
    progress = kw.pop("progress", None)
    execute(wh, RunOptions(str(ds), run_id=run_id, **kw), runner=runner, clock=clock, progress=progress)
    return runner


def _report(wh: Warehouse, run_id: str) -> str:
    """The report JSON with its cases, run id removed (two runs of one dataset compare byte for byte)."""
    doc = R.build(connect(wh, [run_id]), run_id, R.Options(include_cases=True))
    assert doc["extensions"]["run"].pop("run_id") == run_id
    return R.dumps(doc)


def _decisions(wh: Warehouse, run_id: str) -> List[tuple]:
    con = connect(wh, [run_id])
    return con.execute("SELECT * EXCLUDE (run_id) FROM decisions ORDER BY row_index, qid_pos NULLS FIRST, "
                       "error NULLS FIRST").fetchall()


def _calls_from(ds: Path, start: int, batch_size: int) -> int:
    """How many runner calls cover the rows from `start` on (S6.12 grouping of the whole dataset)."""
    from laya_cases.core import dataset as D

    rows = D.load(str(ds))
    sigs = [signature(r.questions) for r in rows]
    return sum(1 for p in chunks(rows, [None] * len(rows), batch_size, True, sigs) if p[0] >= start)


class Interrupt(BaseException):
    """Stands for a Ctrl-C or a kill between two runner calls."""


def _stop_after(rows: int):
    def progress(done: int) -> None:
        if done >= rows:
            raise Interrupt()
    return progress


@pytest.fixture
def ds(tmp_path) -> Path:
    return write_dataset(tmp_path / "ds.jsonl", 40)


@pytest.fixture
def reference(tmp_path, ds):
    """The uninterrupted, one-commit run of `ds` (skip: its BOOM row is an error record)."""
    wh = Warehouse(tmp_path / "ref")
    _run(wh, ds, "ref", batch_size=3, on_error="skip", commit_every=0)
    return wh


# ---------------------------------------------------------------------------- chunked = one-shot
def test_a_one_shot_run_writes_the_layout_of_today(reference):
    """Without a due chunk (the bundled small runs) a run is one part file per table, no progress entry."""
    root = reference.root
    assert os.listdir(root / "cases" / "run_id=ref") == ["part-00000.parquet"]
    assert os.listdir(root / "slice_sets" / "run_id=ref") == ["part-00000.parquet"]
    assert not (root / "_progress").exists() and reference.run_state("ref") == "complete"


@pytest.mark.parametrize("every", [4, *(pytest.param(e, marks=pytest.mark.slow) for e in (1, 7))])
@pytest.mark.slow
def test_a_chunked_run_equals_the_one_shot_run(tmp_path, ds, reference, every):
    wh = Warehouse(tmp_path / "wh")
    _run(wh, ds, "r", batch_size=3, on_error="skip", commit_every=every)
    assert len(wh.case_files("r")) > 1 and not (wh.root / "_progress" / "run_id=r").exists()
    assert _decisions(wh, "r") == _decisions(reference, "ref")
    assert _report(wh, "r") == _report(reference, "ref")
    assert check(wh) == []


# ---------------------------------------------------------------------------- resume
@pytest.mark.parametrize("every,stop", [(1, 1), (4, 20), *(pytest.param(e, s, marks=pytest.mark.slow)
                                                          for e, s in [(4, 9), (7, 36), (5, 39)])])
@pytest.mark.slow
def test_an_interrupted_run_resumes_with_only_the_missing_calls(tmp_path, ds, reference, every, stop):
    """Interrupted after `stop` rows: the resume calls the runner for the uncommitted rows only, and the
    run ends equal to the uninterrupted one, decision for decision (call ids, timing, `errored`)."""
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(Interrupt):
        _run(wh, ds, "r", batch_size=3, on_error="skip", commit_every=every, progress=_stop_after(stop))
    assert wh.run_state("r") == "incomplete" and wh.run_ids() == [] and check(wh) == []
    committed = json.loads(wh.progress_file("r").read_text())["rows_committed"]
    assert 0 < committed < stop + 3           # the call that passed `stop` was committed, none after it
    runner = _run(wh, ds, "r", batch_size=3, on_error="skip", commit_every=every, resume=True)
    assert runner.calls == _calls_from(ds, committed, 3)
    assert wh.run_state("r") == "complete" and not wh.progress_entry("r").exists()
    assert _decisions(wh, "r") == _decisions(reference, "ref")
    assert _report(wh, "r") == _report(reference, "ref")
    assert check(wh) == []


@pytest.mark.slow
def test_a_runner_crash_leaves_a_resumable_run(tmp_path):
    """--on-error fail: the crash stops the run (RunnerCrash, exit 1); committed chunks stay, and the
    resume (twice interrupted here) finishes the run as if nothing happened."""
    ds = write_dataset(tmp_path / "ds.jsonl", 30, special=False)
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", batch_size=2, commit_every=0)
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(RunnerCrash) as crash:
        _run(wh, ds, "r", batch_size=2, commit_every=3, fail_at=6)
    assert crash.value.run_id == "r" and wh.run_state("r") == "incomplete"
    with pytest.raises(RunnerCrash):
        _run(wh, ds, "r", batch_size=2, commit_every=3, fail_at=4, resume=True)
    committed = json.loads(wh.progress_file("r").read_text())["rows_committed"]
    runner = _run(wh, ds, "r", batch_size=2, commit_every=3, resume=True)
    assert runner.calls == _calls_from(ds, committed, 2)
    assert _report(wh, "r") == _report(ref, "ref") and _decisions(wh, "r") == _decisions(ref, "ref")


@pytest.fixture
def incomplete(tmp_path, ds):
    """Warehouse with a complete run `ref` and an incomplete run `r` (22 of 40 rows committed)."""
    wh = Warehouse(tmp_path / "wh")
    _run(wh, ds, "ref", batch_size=3, on_error="skip", commit_every=0)
    with pytest.raises(Interrupt):
        _run(wh, ds, "r", batch_size=3, on_error="skip", commit_every=4, progress=_stop_after(20))
    return wh


@pytest.mark.parametrize("change,needle", [
    ({"batch_size": 2}, "options.batch_size differs (recorded 3, now 2)"),
    ({"on_error": "fail"}, "options.on_error"),
    ({"min_confidence": 0.5}, "options.min_confidence"),
    ({"sort_by_length": True}, "options.sort_by_length"),
    ({"runner_options": {"x": 1}}, "options.runner_options"),
    ({"dataset": "other"}, "dataset_sha256 differs"),
    ({"revision": "2" * 40}, "settings.model_revision differs"),
], ids=["batch-size", "on-error", "min-confidence", "sort", "runner-options", "dataset", "model-revision"])
def test_a_resume_of_another_run_is_refused_naming_the_difference(tmp_path, ds, incomplete, change, needle):
    before = snapshot_tree(incomplete.root)
    kw: Dict[str, Any] = dict(batch_size=3, on_error="skip", commit_every=4, resume=True)
    clock = FakeClock()
    runner = ResumeDouble(clock=clock)
    if "revision" in change:
        runner.info.revision = change.pop("revision")
    if "dataset" in change:
        change["dataset"] = str(write_dataset(tmp_path / "other.jsonl", 41))
    kw.update(change)
    with pytest.raises(UsageError) as refused:
        execute(incomplete, RunOptions(kw.pop("dataset", str(ds)), run_id="r", **kw), runner=runner, clock=clock)
    assert needle in str(refused.value) and "cannot resume run 'r'" in str(refused.value)
    assert runner.calls == 0 and snapshot_tree(incomplete.root) == before


def test_ids_are_checked_before_anything_runs(tmp_path, ds, incomplete):
    before = snapshot_tree(incomplete.root)
    cases = [({"run_id": "r"}, "already exists", "--resume r"),              # a new run cannot take the id
             ({"run_id": "ref", "resume": True}, "is complete: nothing to resume", ""),
             ({"run_id": "nope", "resume": True}, "no incomplete run with that id", ""),
             ({"resume": True}, "--resume needs the id", ""),
             ({"run_id": "r", "resume": True, "commit_every": -1}, "--commit-every", "")]
    for kw, needle, more in cases:
        with pytest.raises(UsageError) as refused:
            _run(incomplete, ds, kw.pop("run_id", None), batch_size=3, on_error="skip", **kw)
        assert needle in str(refused.value) and more in str(refused.value), str(refused.value)
    from laya_cases.record.ingest.answers import ingest

    with pytest.raises(UsageError, match="incomplete run"):
        ingest(incomplete, str(ROOT / "data" / "support.answers.jsonl"), run_id="r")
    assert snapshot_tree(incomplete.root) == before


# ---------------------------------------------------------------------------- how an incomplete run reads
def _cli(*args: str):
    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    registry.register(ResumeDouble.name, ResumeDouble)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        registry.unregister(ResumeDouble.name)


def _one_line(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.slow
def test_an_incomplete_run_is_named_reported_and_refused_to_gates(tmp_path, ds, incomplete):
    wh = str(incomplete.root)
    before = snapshot_tree(incomplete.root)
    listed = _cli("runs", "-w", wh, "--format", "json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["ref"]
    assert listed.stderr.splitlines() == ["laya-cases: note: run 'r' is incomplete: 22 of 40 dataset row(s) "
                                          "committed; `laya-cases run %s ... --resume r` finishes it" % ds]
    out = tmp_path / "r.json"
    shown = _cli("report", "r", "-w", wh, "--json", str(out))
    assert shown.exit_code == 0 and "is incomplete: 22 of 40" in shown.stderr
    assert "this report covers the committed rows only" in shown.stderr
    run = json.loads(out.read_text())["extensions"]["run"]
    assert (run["complete"], run["rows_committed"], run["n_rows"]) == (False, 22, 40)
    _one_line(_cli("report", "r", "-w", wh, "--min-accuracy", "0.1"), "is incomplete", "needs a complete run")
    _one_line(_cli("report", "ref", "-w", wh, "--baseline", "r"), "is incomplete")
    _one_line(_cli("compare", "r", "--baseline", "ref", "-w", wh), "is incomplete")
    _one_line(_cli("compare", "ref", "--baseline", "r", "-w", wh), "is incomplete")
    _one_line(_cli("diff", "ref", "r", "-w", wh), "is incomplete")
    counted = _cli("sql", "SELECT count(DISTINCT run_id) AS n FROM decisions", "-w", wh, "--format", "json")
    assert json.loads(counted.stdout) == [{"n": 1}]
    assert _cli("check", "-w", wh).stdout == "ok: 1 run(s)\n"
    assert _cli("gc", "-w", wh).stdout == "removed 0 staging area(s), 0 orphan partition(s)\n"
    assert snapshot_tree(incomplete.root) == before          # gc kept the incomplete run whole
    # a third-party reader keeps the runs of the runs table: the incomplete run is not among them
    con = duckdb.connect()
    glob = str(incomplete.root / "runs" / "run_id=*" / "*.parquet")
    assert con.execute("SELECT list(run_id) FROM read_parquet('%s')" % glob).fetchone()[0] == ["ref"]


@pytest.mark.slow
def test_cli_resume_finishes_the_run(tmp_path, ds, incomplete):
    wh = str(incomplete.root)
    common = [str(ds), "--model", "resume-double", "--batch-size", "3", "--on-error", "skip", "-w", wh]
    _one_line(_cli("run", *common, "--resume", "r"), "options.model differs (recorded None, now 'resume-double')")
    with pytest.raises(Interrupt):               # `c` as `laya-cases run ... --model resume-double` starts it
        _run(incomplete, ds, "c", model="resume-double", batch_size=3, on_error="skip", commit_every=4,
             progress=_stop_after(10))
    _one_line(_cli("run", *common, "--run-id", "x", "--resume", "c"), "name different runs")
    _one_line(_cli("run", *common, "--batch-size", "4", "--resume", "c"), "options.batch_size differs")
    _one_line(_cli("run", *common, "--run-id", "c"), "incomplete run", "--resume c")
    done = _cli("run", *common, "--resume", "c", "--commit-every", "4")
    assert done.exit_code == 0, done.stderr
    assert incomplete.run_state("c") == "complete" and check(incomplete) == []
    assert "'c'" not in _cli("runs", "-w", wh).stderr


def test_gc_removes_stray_parts_and_the_progress_entry_of_a_committed_run(tmp_path, ds, incomplete):
    """A writer killed between a part's rename and its progress entry leaves a part no entry lists; one
    killed after the final runs rename leaves the progress entry: gc removes both, nothing else."""
    part = incomplete.case_partition("r")
    before = _decisions(incomplete, "r")
    stray = part / "part-00099.parquet"
    stray.write_bytes((part / "part-00000.parquet").read_bytes())
    assert incomplete.leftovers()["orphans"] == [str(stray)]
    assert _decisions(incomplete, "r") == before and check(incomplete) == []      # a part not listed is not read
    stale = incomplete.progress_entry("ref")
    stale.mkdir(parents=True)
    (stale / "progress.json").write_text("{}")
    out = _cli("gc", "-w", str(incomplete.root)).stdout.splitlines()
    assert out == [str(stray), str(stale), "removed 0 staging area(s), 2 orphan partition(s)"]
    assert incomplete.run_state("r") == "incomplete" and incomplete.run_state("ref") == "complete"


def test_a_damaged_progress_entry_is_named(tmp_path, incomplete):
    incomplete.progress_file("r").write_text('{"format": "laya-cases-progress/1"}')
    problems = check(incomplete)
    assert len(problems) == 1 and "progress.json" in problems[0] and "field" in problems[0]
    _one_line(_cli("report", "r", "-w", str(incomplete.root)), "run 'r' is damaged", "progress.json")


# ---------------------------------------------------------------------------- real processes
def _strip_timing(doc: Any) -> Any:
    """The report without its timing numbers (call_ms of the calls after the kill come from the clock)."""
    if isinstance(doc, dict):
        return {k: _strip_timing(v) for k, v in doc.items()
                if "latency" not in k and "cost_per_decision" not in k and k != "run_id"}
    if isinstance(doc, list):
        return [_strip_timing(v) for v in doc]
    return doc


def _double_cli(*args: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, DOUBLE, *args], capture_output=True, text=True, cwd=str(ROOT),
                          env={**os.environ, **env})


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_finishes_only_what_was_missing(tmp_path):
    ds = write_dataset(tmp_path / "ds.jsonl", 60)
    wh = Warehouse(tmp_path / "wh")
    common = [str(ds), "--model", "resume-double", "--batch-size", "2", "--on-error", "skip", "-w", str(wh.root)]
    first_log, resume_log = tmp_path / "first.log", tmp_path / "resume.log"

    def committed() -> int:
        try:
            return json.loads(wh.progress_file("k").read_text())["rows_committed"]
        except (OSError, ValueError):
            return 0
    with handshake.Pipes(tmp_path / "pipes", "held") as pipes:      # killed in its 11th call: 3 chunks in
        proc = subprocess.Popen([sys.executable, DOUBLE, "run", *common, "--run-id", "k", "--commit-every", "6"],
                                cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, LOG_ENV: str(first_log), **pipes.hold_env("held", 11)})
        try:
            pipes.wait("held", 1, proc, "the 11th call")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert wh.run_state("k") == "incomplete" and wh.run_ids() == [] and check(wh) == []
    done = committed()
    assert done == 18
    resumed = _double_cli("run", *common, "--resume", "k", "--commit-every", "6", "--json", str(tmp_path / "k.json"),
                          env={LOG_ENV: str(resume_log)})
    assert resumed.returncode == 0, resumed.stderr
    assert len(resume_log.read_text().splitlines()) == _calls_from(ds, done, 2)
    assert len(first_log.read_text().splitlines()) >= _calls_from(ds, 0, 2) - _calls_from(ds, done, 2)
    whole = _double_cli("run", *common, "--run-id", "whole", "--json", str(tmp_path / "whole.json"), env={})
    assert whole.returncode == 0, whole.stderr
    killed, uninterrupted = (json.loads((tmp_path / n).read_text()) for n in ("k.json", "whole.json"))
    assert json.dumps(_strip_timing(killed), sort_keys=True, indent=2) == \
        json.dumps(_strip_timing(uninterrupted), sort_keys=True, indent=2)
    assert killed["overall"].keys() == uninterrupted["overall"].keys()
    assert check(wh) == [] and wh.leftovers() == {"staging": [], "orphans": []}


_KILL_AT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
    from doubles import FakeClock, die_at_rename
    from resume_double import ResumeDouble
    from laya_cases.run.execute import execute; from laya_cases.run.options import RunOptions
    from laya_cases.store.warehouse import Warehouse

    root = sys.argv[3]
    die_at_rename(root, int(sys.argv[5]))
    clock = FakeClock()
    execute(Warehouse(root), RunOptions(sys.argv[2], run_id=sys.argv[4], batch_size=2, on_error="skip",
            commit_every=3), runner=ResumeDouble(clock=clock), clock=clock)
""")


def _no_torn_file(root: Path) -> None:
    for path in root.rglob("*.parquet"):
        pq.read_metadata(str(path))


@pytest.mark.slow   # ~20 kills
def test_a_kill_at_every_commit_step_leaves_nothing_torn_and_resumes(tmp_path):
    ds = write_dataset(tmp_path / "ds.jsonl", 8)
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", batch_size=2, on_error="skip", commit_every=0)
    expected = _report(ref, "ref")
    answers = str(ROOT / "data" / "support.answers.jsonl")
    kill_at, states = 1, set()
    while True:
        wh = Warehouse(tmp_path / ("wh%d" % kill_at))
        proc = subprocess.run([sys.executable, "-c", _KILL_AT, str(ROOT), str(ds), str(wh.root), "r", str(kill_at)],
                              capture_output=True, text=True, cwd=str(ROOT))
        if proc.returncode == 0:
            break
        assert proc.returncode == 9, proc.stderr
        state = wh.run_state("r")
        states.add(state)
        _no_torn_file(wh.root)
        assert check(wh) == [] and wh.run_ids() == (["r"] if state == "complete" else [])
        if state == "incomplete":                 # what is committed reads, as an incomplete run
            R.build(connect(wh, ["r"]), "r", R.Options())
        from laya_cases.record.ingest.answers import ingest

        ingest(wh, answers, run_id="other")        # the next commit removes the killed writer's staging area
        assert wh.leftovers()["staging"] == [] and not any((wh.root / "_staging").iterdir())
        if state != "complete":
            _run(wh, ds, "r", batch_size=2, on_error="skip", commit_every=3, resume=state == "incomplete")
        assert _report(wh, "r") == expected and check(wh) == []
        wh.gc()
        assert wh.leftovers() == {"staging": [], "orphans": []} and not wh.progress_entry("r").exists()
        kill_at += 1
    assert states == {None, "incomplete", "complete"} and kill_at > 10
