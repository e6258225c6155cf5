"""Sharded runs: `laya-cases run DATASET --shard I/N --run-id ID` (issue 14 item 2; laya_cases/run/shard.py).

N shards, in any order or at once, into one warehouse make the run an unsharded run makes (same
decisions, case ids, slice sets, report) once all N are in; before that the run is incomplete,
its report names the missing shards, and gates refuse it unless --allow-partial. A shard of another
identity is refused (exit 2, store untouched), a device may differ, a shard that died continues.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import duckdb
import pytest
from typer.testing import CliRunner

import handshake
from doubles import FakeClock
from helpers import ROOT, snapshot_tree
from resume_double import ResumeDouble, write_dataset
from shard_double import LOG_ENV, ShardDouble

from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.runners import registry
from laya_cases.run.shard import parse_shard, share
from laya_cases.store.check import check
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

SUPPORT = ROOT / "data" / "support.jsonl"
DOUBLE = str(ROOT / "tests" / "shard_double.py")


# ---------------------------------------------------------------------------- helpers
def _run(wh: Warehouse, ds: Path, run_id: str, runner_cls=ResumeDouble, **kw: Any):
    clock = FakeClock()
    runner = kw.pop("runner", None) or runner_cls(clock=clock)
    progress = kw.pop("progress", None)
    return execute(wh, RunOptions(str(ds), run_id=run_id, **kw), runner=runner, clock=clock, progress=progress)


def _report(wh: Warehouse, run_id: str) -> Dict[str, Any]:
    """The report with its cases; run id and the sharded run's `shards` block removed."""
    doc = R.build(connect(wh, [run_id]), run_id, R.Options(include_cases=True))
    run = doc["extensions"]["run"]
    assert run.pop("run_id") == run_id
    run.pop("shards", None)
    return json.loads(R.dumps(doc))


def _decisions(wh: Warehouse, run_id: str) -> List[tuple]:
    return connect(wh, [run_id]).execute(
        "SELECT * EXCLUDE (run_id) FROM decisions ORDER BY row_index, qid_pos NULLS FIRST, error NULLS FIRST").fetchall()


def _slice_sets(wh: Warehouse, run_id: str) -> List[tuple]:
    """(slice set attributes, the cases of it): equal between two runs whatever the ids are."""
    return connect(wh, [run_id]).execute(
        "SELECT s.language_key, s.model_key, s.qid, s.tags, s.answer_type, s.correct, count(*) FROM decisions d "
        "JOIN slice_sets s USING (slice_set) GROUP BY ALL ORDER BY ALL").fetchall()


def _cli(*args: str):
    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    registry.register(ShardDouble.name, ShardDouble)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        registry.unregister(ShardDouble.name)


def _one_line(result, *needles: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


class Interrupt(BaseException):
    """Stands for a kill between two runner calls."""


@pytest.fixture
def ds(tmp_path) -> Path:
    """40 rows: repeated states across shard boundaries (case ids `#n`), a failing row, a silent one."""
    return write_dataset(tmp_path / "ds.jsonl", 40)


# ---------------------------------------------------------------------------- shares
def test_shares_are_contiguous_cover_every_row_once_and_differ_by_at_most_one():
    for n in (0, 1, 3, 16, 40, 1001):
        for count in (1, 2, 3, 4, 7, 16, 50):
            ranges = [share(n, i, count) for i in range(1, count + 1)]
            assert ranges[0][0] == 0 and ranges[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
            sizes = [hi - lo for lo, hi in ranges]
            assert max(sizes) - min(sizes) <= 1, (n, count, sizes)
    assert [share(16, i, 4) for i in (1, 2, 3, 4)] == [(0, 4), (4, 8), (8, 12), (12, 16)]


@pytest.mark.parametrize("text,needle", [("0/4", "I must be 1..4"), ("5/4", "I must be 1..4"), ("1/0", "N must be"),
                                         ("x", "expects I/N"), ("-1/4", "expects I/N"), ("1/10000", "N must be"),
                                         ("2", "expects I/N"), ("1/4/2", "expects I/N")])
def test_bad_shard_values_are_usage_errors(text, needle):
    with pytest.raises(UsageError, match=needle):
        parse_shard(text)


def test_bad_shard_flags_exit_2_with_one_line_and_write_nothing(tmp_path):
    wh = tmp_path / "wh"
    common = [str(SUPPORT), "--model", "shard-double", "-w", str(wh)]
    for flags, needle in [(["--shard", "0/4", "--run-id", "x"], "I must be 1..4"),
                          (["--shard", "5/4", "--run-id", "x"], "I must be 1..4"),
                          (["--shard", "1/0", "--run-id", "x"], "N must be"),
                          (["--shard", "a/b", "--run-id", "x"], "expects I/N"),
                          (["--shard", "2/4"], "--shard needs --run-id")]:
        _one_line(_cli("run", *common, *flags), needle)
    assert not wh.exists()


# ---------------------------------------------------------------------------- sharded = unsharded
@pytest.mark.parametrize("count,order,every", [pytest.param(4, [3, 1, 4, 2], 2, marks=pytest.mark.slow), (3, [2, 3, 1], 0),
                                               (1, [1], 0)])
@pytest.mark.slow
def test_shards_in_any_order_make_the_unsharded_run(tmp_path, ds, count, order, every):
    """Decisions (case ids with their #n, call facts aside), slice sets and the whole report equal the
    unsharded run's; with one row per call even the timing block does."""
    _sharded_equals_unsharded(tmp_path, ds, count, order, every)


@pytest.mark.slow   # 8 shards, ~4 s
def test_more_shards_than_rows_leaves_some_empty(tmp_path):
    ds = write_dataset(tmp_path / "ds.jsonl", 6)
    _sharded_equals_unsharded(tmp_path, ds, 8, [8, 1, 7, 2, 6, 3, 5, 4], 0)


def _sharded_equals_unsharded(tmp_path, ds, count, order, every):
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", on_error="skip", commit_every=0)
    wh = Warehouse(tmp_path / "wh")
    order = order or list(range(count, 0, -1))
    for k, index in enumerate(order):
        done = _run(wh, ds, "s", on_error="skip", commit_every=every, shard=(index, count))
        assert done.complete == (k == len(order) - 1) and wh.run_state("s") == ("complete" if done.complete else
                                                                                 "incomplete" if wh.progress_file("s").exists() else None)
    assert wh.run_ids() == ["s"] and not wh.progress_entry("s").exists()
    # shard k's call ids start at its first row; slice-set ids are numbered as shards meet them (compared
    # by what they stand for below); call_ms is the fake clock of another process
    drop = ("call_id", "slice_set", "call_ms")
    names = [c[0] for c in connect(wh, ["s"]).execute("DESCRIBE SELECT * EXCLUDE (run_id) FROM decisions").fetchall()]
    keep = [i for i, n in enumerate(names) if n not in drop]
    assert [tuple(r[i] for i in keep) for r in _decisions(wh, "s")] == \
        [tuple(r[i] for i in keep) for r in _decisions(ref, "ref")]
    assert _slice_sets(wh, "s") == _slice_sets(ref, "ref")
    assert _report(wh, "s") == _report(ref, "ref")
    sets = connect(wh, ["s"]).execute("SELECT count(*), count(DISTINCT slice_set), min(slice_set), max(slice_set) "
                                     "FROM slice_sets").fetchone()
    assert sets[0] == sets[1] and sets[2] == 0 and sets[3] == sets[0] - 1       # one dense id per combination
    assert check(wh) == [] and wh.leftovers() == {"staging": [], "orphans": []}
    shards = json.loads(connect(wh, ["s"]).execute("SELECT settings_json FROM runs").fetchone()[0])["shards"]
    assert shards["count"] == count and [s["rows"] for s in shards["shards"]] == \
        [list(share(connect(ref, ["ref"]).execute("SELECT n_rows FROM runs").fetchone()[0], i, count))
         for i in range(1, count + 1)]


@pytest.mark.slow
def test_batched_shards_make_the_same_decisions_and_call_ids_stay_unique(tmp_path):
    """--batch-size 3: the calls at shard boundaries group differently (timing differs), nothing else."""
    ds = write_dataset(tmp_path / "ds.jsonl", 30, special=False)
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", batch_size=3)
    wh = Warehouse(tmp_path / "wh")
    for index in (2, 4, 1, 3):
        _run(wh, ds, "s", batch_size=3, shard=(index, 4), commit_every=2)
    con = connect(wh, ["s"])
    per_call = con.execute("SELECT call_id, count(DISTINCT row_index), any_value(chunk_size) FROM decisions "
                           "GROUP BY call_id").fetchall()
    assert all(rows == size for _, rows, size in per_call)        # a call id names one call of one shard
    fields = "case_id, row_index, qid, predicted, confidence, correct, slice_set IS NOT NULL"
    query = "SELECT %s FROM decisions ORDER BY row_index, qid_pos" % fields
    assert con.execute(query).fetchall() == connect(ref, ["ref"]).execute(query).fetchall()
    assert _slice_sets(wh, "s") == _slice_sets(ref, "ref")


# ---------------------------------------------------------------------------- incomplete runs
@pytest.fixture
def partial(tmp_path):
    """Run X of the bundled dataset with shard 3 of 4 missing, and the unsharded run `whole`."""
    wh = Warehouse(tmp_path / "wh")
    _run(wh, SUPPORT, "whole", runner_cls=ShardDouble, model="shard-double")
    for index in (1, 4, 2):
        _run(wh, SUPPORT, "X", runner_cls=ShardDouble, shard=(index, 4), model="shard-double")
    return wh


@pytest.mark.slow
def test_a_missing_shard_is_reported_and_gates_refuse_it(tmp_path, partial):
    w = str(partial.root)
    before = snapshot_tree(partial.root)
    listed = _cli("runs", "-w", w, "--format", "json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["whole"]
    assert "run 'X' is incomplete: shard 3 of 4 is missing (12 of 16 dataset row(s) committed)" in listed.stderr
    assert "--shard I/4 --run-id X` runs a missing shard" in listed.stderr
    out = tmp_path / "x.json"
    shown = _cli("report", "X", "-w", w, "--json", str(out))
    assert shown.exit_code == 0 and "shard 3 of 4 is missing" in shown.stderr, shown.stderr
    run = json.loads(out.read_text())["extensions"]["run"]
    assert (run["complete"], run["rows_committed"], run["n_rows"]) == (False, 12, 16)
    assert [s["shard"] for s in run["shards"]["shards"]] == [1, 2, 4]
    _one_line(_cli("report", "X", "-w", w, "--min-accuracy", "0.1"), "shard 3 of 4 is missing",
              "a gate needs a complete run (--allow-partial")
    _one_line(_cli("report", "whole", "-w", w, "--baseline", "X"), "is incomplete")
    _one_line(_cli("compare", "X", "--baseline", "whole", "-w", w), "is incomplete")
    _one_line(_cli("diff", "whole", "X", "-w", w), "is incomplete")
    judged = _cli("report", "X", "-w", w, "--min-accuracy", "0.1", "--allow-partial")
    assert judged.exit_code == 0 and "gates judged on them (--allow-partial)" in judged.stderr, judged.stderr
    failed = _cli("report", "X", "-w", w, "--min-accuracy", "0.99", "--allow-partial")
    assert failed.exit_code == 1 and "FAIL" in failed.stderr
    assert _cli("check", "-w", w).stdout == "ok: 1 run(s)\n"
    assert _cli("gc", "-w", w).stdout == "removed 0 staging area(s), 0 orphan partition(s)\n"
    assert snapshot_tree(partial.root) == before
    con = duckdb.connect()             # a third-party reader of the runs table sees the complete run only
    glob = str(partial.root / "runs" / "run_id=*" / "*.parquet")
    assert con.execute("SELECT list(run_id) FROM read_parquet('%s')" % glob).fetchone()[0] == ["whole"]
    last = _cli("run", str(SUPPORT), "--model", "shard-double", "--shard", "3/4", "--run-id", "X", "-w", w,
                "--min-accuracy", "0.1")
    assert last.exit_code == 0 and "committed run X" in last.stderr and "choice_accuracy" in last.stdout
    assert partial.run_ids() == ["X", "whole"]
    assert _strip(_report(partial, "X")) == _strip(_report(partial, "whole"))      # shard 3 ran on the wall clock


def test_a_shard_that_is_not_the_last_prints_where_the_run_stands(tmp_path):
    w = str(tmp_path / "wh")
    first = _cli("run", str(SUPPORT), "--model", "shard-double", "--shard", "2/2", "--run-id", "Q", "-w", w,
                 "--json", str(tmp_path / "q.json"), "--min-accuracy", "0.1")
    assert first.exit_code == 0 and first.stdout == "" and not (tmp_path / "q.json").exists()
    assert "committed shard 2/2 of run Q" in first.stderr and "shard 1 of 2 is missing" in first.stderr
    assert "the gate flags given to this shard were not judged" in first.stderr     # said, not dropped
    quiet = _cli("run", str(SUPPORT), "--model", "shard-double", "--shard", "1/2", "--run-id", "Q", "-w", w, "-q")
    assert quiet.exit_code == 0 and quiet.stdout == "Q\n"
    _one_line(_cli("run", str(SUPPORT), "--model", "shard-double", "--shard", "1/2", "--run-id", "Q", "-w", w),
              "the run is complete")


# ---------------------------------------------------------------------------- identity
@pytest.mark.parametrize("flags,needle", [
    (["--batch-size", "2"], "options.batch_size differs (recorded None, now 2)"),
    (["--min-confidence", "0.5"], "options.min_confidence differs"),
    (["--on-error", "skip"], "options.on_error differs"),
    (["--limit", "15"], "labelled_rows_sha256 differs"),
    (["--runner-option", "x=1"], "options.runner_options.x differs"),
    (["DATASET"], "dataset_sha256 differs"),
    (["--shard", "2/3"], "the run is split into 4 shards, not 3"),
], ids=["batch-size", "min-confidence", "on-error", "limit", "runner-option", "dataset", "count"])
def test_a_shard_of_another_identity_is_refused_and_the_store_is_unchanged(tmp_path, partial, flags, needle):
    before = snapshot_tree(partial.root)
    dataset = str(SUPPORT)
    if flags == ["DATASET"]:
        other = tmp_path / "other.jsonl"
        other.write_text(SUPPORT.read_text() + "\n")            # same rows, other bytes
        dataset, flags = str(other), []
    shard = [] if "--shard" in flags else ["--shard", "3/4"]
    line = _one_line(_cli("run", dataset, "--model", "shard-double", "--run-id", "X", "-w", str(partial.root),
                          *shard, *flags), needle)
    assert line.startswith("laya-cases: cannot run shard 3/4 of run 'X'") or "2/3" in line, line
    assert snapshot_tree(partial.root) == before


def test_a_runner_loaded_with_other_settings_is_refused_after_loading(partial):
    before = snapshot_tree(partial.root)
    runner = ShardDouble()
    runner.info.revision = "3" * 40
    with pytest.raises(UsageError, match="settings.model_revision differs"):
        _run(partial, SUPPORT, "X", runner=runner, shard=(3, 4), model="shard-double")
    assert runner.calls == 0 and snapshot_tree(partial.root) == before


@pytest.mark.slow
def test_shards_may_run_on_different_devices(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    _run(wh, SUPPORT, "whole", runner_cls=ShardDouble)
    for index, device in ((1, "cpu"), (2, "cuda")):
        runner = ShardDouble(device=device)
        _run(wh, SUPPORT, "D", runner=runner, shard=(index, 2), device=device)
    settings = json.loads(connect(wh, ["D"]).execute("SELECT settings_json FROM runs").fetchone()[0])
    assert settings["device"] == ["cpu", "cuda"]
    assert [s["device"] for s in settings["shards"]["shards"]] == ["cpu", "cuda"]
    assert _strip(_report(wh, "D")["overall"]) == _strip(_report(wh, "whole")["overall"])


def test_ids_of_other_runs_are_not_taken(tmp_path, partial, ds):
    before = snapshot_tree(partial.root)
    with pytest.raises(UsageError, match="sharded run in progress"):
        _run(partial, SUPPORT, "X", runner_cls=ShardDouble, resume=True)
    with pytest.raises(UsageError, match="sharded run in progress"):
        _run(partial, SUPPORT, "X", runner_cls=ShardDouble)
    with pytest.raises(UsageError, match="the run is complete"):
        _run(partial, SUPPORT, "whole", runner_cls=ShardDouble, shard=(1, 2))
    with pytest.raises(UsageError, match="already committed"):
        _run(partial, SUPPORT, "X", runner_cls=ShardDouble, shard=(2, 4), model="shard-double")
    assert snapshot_tree(partial.root) == before
    wh = Warehouse(tmp_path / "other")
    with pytest.raises(Interrupt):
        _run(wh, ds, "plain", commit_every=2, progress=_stop_after(5))
    with pytest.raises(UsageError, match="not sharded"):
        _run(wh, ds, "plain", shard=(1, 2))


# ---------------------------------------------------------------------------- a shard that dies
def _stop_after(rows: int):
    def progress(done: int) -> None:
        if done >= rows:
            raise Interrupt()
    return progress


@pytest.mark.slow
def test_a_dead_shard_continues_from_its_committed_chunks(tmp_path, ds):
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", on_error="skip", commit_every=0)
    wh = Warehouse(tmp_path / "wh")
    _run(wh, ds, "s", on_error="skip", shard=(1, 3))
    with pytest.raises(Interrupt):
        _run(wh, ds, "s", on_error="skip", shard=(2, 3), commit_every=3, progress=_stop_after(7))
    entry = json.loads(wh.progress_file("s").read_text())
    assert entry["rows_committed"] == 13 + 6 and entry["shards"]["complete"] == [1]
    runner = ShardCounting(clock=FakeClock())
    _run(wh, ds, "s", on_error="skip", shard=(2, 3), commit_every=3, runner=runner)
    assert runner.rows == 13 - 6                     # shard 2 is rows 13..25: 6 were committed
    _run(wh, ds, "s", on_error="skip", shard=(3, 3))
    assert _report(wh, "s") == _report(ref, "ref") and check(wh) == []


class ShardCounting(ResumeDouble):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.rows = 0

    def predict_batch(self, states, questions, **kwargs):
        self.rows += len(states)
        return super().predict_batch(states, questions, **kwargs)


def test_a_live_shard_is_not_run_twice_and_gc_keeps_its_claim(tmp_path, ds):
    wh = Warehouse(tmp_path / "wh")
    seen: List[str] = []

    def meanwhile(done: int) -> None:
        if done == 2:
            wh.gc()                                   # before the shard's first commit: its claim stays
            assert wh.progress_entry("s").is_dir()
            try:
                _run(wh, ds, "s", on_error="skip", shard=(1, 2))
            except UsageError as exc:
                seen.append(str(exc))
    _run(wh, ds, "s", on_error="skip", shard=(1, 2), commit_every=0, progress=meanwhile)
    assert len(seen) == 1 and "another process is writing that shard" in seen[0]
    with pytest.raises(Interrupt):                    # a claim whose writer died before any commit is debris
        _run(wh, ds, "t", on_error="skip", shard=(1, 2), commit_every=0, progress=_stop_after(3))
    assert wh.progress_entry("t").is_dir() and wh.run_state("t") is None
    wh.gc()
    assert not wh.progress_entry("t").exists()


# ---------------------------------------------------------------------------- processes
def _strip(doc: Any) -> Any:
    """A report without its wall-clock timing, run id and shard block."""
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items()
                if "latency" not in k and "cost_per_decision" not in k and k not in ("run_id", "shards")}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


@pytest.mark.slow   # 5 processes
def test_four_concurrent_shard_processes_equal_the_unsharded_run(tmp_path):
    """The acceptance check: four processes run `--shard i/4` of the bundled dataset into one warehouse at
    once (they take turns call by call, tests/handshake.py, so their calls interleave, and each commits
    after every row while the next one calls); `report X --json` equals the unsharded run's."""
    wh = Warehouse(tmp_path / "wh")
    log = tmp_path / "calls.log"
    common = [sys.executable, DOUBLE, "run", str(SUPPORT), "--model", "shard-double", "-w", str(wh.root)]
    with handshake.Pipes(tmp_path / "turns", "1", "2", "3", "4") as pipes:
        envs = handshake.turns(pipes, ["1", "2", "3", "4"])       # the 4 shards have 4 calls each
        procs = [subprocess.Popen(common + ["--shard", "%d/4" % i, "--run-id", "X", "--commit-every", "1", "-q"],
                                  cwd=str(ROOT), env={**os.environ, LOG_ENV: str(log), **envs[str(i)]},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in (1, 2, 3, 4)]
        try:
            pipes.post("1")
            outs = [p.communicate(timeout=300) for p in procs]
        finally:
            for p in procs:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [o[1] for o in outs]
    assert [o[0] for o in outs] == ["X\n"] * 4
    pids = [json.loads(line)[0] for line in log.read_text().splitlines()]
    assert pids == [p.pid for p in procs] * 4               # shard 1, 2, 3, 4, shard 1 again, ...
    whole = subprocess.run(common + ["--run-id", "whole", "--json", str(tmp_path / "whole.json")], cwd=str(ROOT),
                           env={**os.environ}, capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    shown = subprocess.run([sys.executable, DOUBLE, "report", "X", "-w", str(wh.root), "--json",
                            str(tmp_path / "x.json")], cwd=str(ROOT), capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    x, ref = (json.loads((tmp_path / n).read_text()) for n in ("x.json", "whole.json"))
    assert json.dumps(_strip(x), sort_keys=True, indent=1) == json.dumps(_strip(ref), sort_keys=True, indent=1)
    assert x["overall"].keys() == ref["overall"].keys() and len(x["cases"]) == 48
    assert check(wh) == [] and wh.leftovers() == {"staging": [], "orphans": []}
    assert not wh.progress_entry("X").exists()


@pytest.mark.slow   # minilm
def test_the_default_model_sharded_equals_unsharded(tmp_path):
    """The real default runner (minilm, loaded once) over the bundled dataset, 4 shards against one run."""
    runner = registry.load(None)
    wh = Warehouse(tmp_path / "wh")
    execute(wh, RunOptions(str(SUPPORT), run_id="whole"), runner=runner)
    for index in (4, 2, 3, 1):
        execute(wh, RunOptions(str(SUPPORT), run_id="X", shard=(index, 4)), runner=runner)
    assert _strip(_report(wh, "X")) == _strip(_report(wh, "whole"))


def test_library_builds_are_compared_without_their_local_label():
    from laya_cases.run.shard import settings_key

    cpu = {"device": "cpu", "versions": {"torch": "2.5.1+cpu", "numpy": "2.1.0", "duckdb": None}, "dtype": "float32"}
    gpu = dict(cpu, device="cuda", versions={"torch": "2.5.1+cu121", "numpy": "2.1.0", "duckdb": None})
    assert settings_key(cpu) == settings_key(gpu)
    assert settings_key(cpu) != settings_key(dict(gpu, versions={"torch": "2.6.0+cu121", "numpy": "2.1.0"}))
    assert settings_key(cpu) != settings_key(dict(gpu, dtype="float16"))


_KILL_AT = """
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
from doubles import FakeClock, die_at_rename
from resume_double import ResumeDouble
from laya_cases.run.execute import execute; from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse

root = sys.argv[3]
die_at_rename(root, int(sys.argv[4]))
clock = FakeClock()
execute(Warehouse(root), RunOptions(sys.argv[2], run_id="s", on_error="skip", commit_every=2, shard=(2, 2)),
        runner=ResumeDouble(clock=clock), clock=clock)
"""


@pytest.mark.slow   # kills
def test_a_kill_at_every_step_of_the_last_shard_leaves_nothing_torn_and_continues(tmp_path):
    """Shard 1 of 2 is in; shard 2 (4 rows, a chunk every 2) is killed before each of its renames and
    removals in turn, then run again: nothing torn, nothing half-visible, and the run ends as the
    unsharded run."""
    import pyarrow.parquet as pq

    ds = write_dataset(tmp_path / "ds.jsonl", 8)
    ref = Warehouse(tmp_path / "ref")
    _run(ref, ds, "ref", on_error="skip", commit_every=0)
    expected = _report(ref, "ref")
    kill_at, states = 1, set()
    while True:
        wh = Warehouse(tmp_path / ("wh%d" % kill_at))
        _run(wh, ds, "s", on_error="skip", shard=(1, 2))
        proc = subprocess.run([sys.executable, "-c", _KILL_AT, str(ROOT), str(ds), str(wh.root), str(kill_at)],
                              capture_output=True, text=True, cwd=str(ROOT))
        if proc.returncode == 0:
            break
        assert proc.returncode == 9, proc.stderr
        state = wh.run_state("s")
        states.add(state)
        for path in wh.root.rglob("*.parquet"):
            pq.read_metadata(str(path))
        assert check(wh) == [] and wh.run_ids() == (["s"] if state == "complete" else [])
        if state == "incomplete":
            R.build(connect(wh, ["s"]), "s", R.Options())
        if state != "complete":
            _run(wh, ds, "s", on_error="skip", commit_every=2, shard=(2, 2))
        assert _report(wh, "s") == expected and check(wh) == []
        wh.gc()
        assert wh.leftovers() == {"staging": [], "orphans": []} and not wh.progress_entry("s").exists()
        kill_at += 1
    assert states == {"incomplete", "complete"} and kill_at > 8
