"""Crash safety and concurrency of the warehouse, with real processes (issue: foundation).

The commit protocol (laya_cases/store/warehouse.py, docs/schema.md): a run is written under
`_staging/<id>.<pid>.<nonce>/`, then committed under `.commit.lock` by two renames, its cases
partition first and its runs entry last; the runs entry is the commit point. These tests kill
writers mid-flight, tear a commit between the renames, and race writers against each other.
Waiting is always "poll the filesystem until a condition holds, bounded by a generous deadline";
no test sleeps for a fixed time or asserts on durations.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pyarrow.parquet as pq
import pytest

import inprocess
from helpers import ROOT, cli, snapshot_tree, wait_for
from laya_cases.store.locks import lock, unlock

SUPPORT_ANSWERS = ROOT / "data" / "support.answers.jsonl"


# ---------------------------------------------------------------------------- helpers
def write_answers(path: Path, n_rows: int, *, qids: int = 1, flip: int = 0) -> Path:
    """n_rows recorded-answer rows with `qids` choice questions each (n_cases = n_rows * qids)."""
    names = ["q%d" % j for j in range(qids)]
    head = '{"state": "s%%d", "questions": %s, "expected": %s, "answers": {' % (
        json.dumps({q: {"type": "choice", "instructions": "pick", "criteria": ["a", "b"]} for q in names}),
        json.dumps({q: "a" for q in names}))
    answer = '"%s": {"type": "choice", "choice": "%%s", "answer_confidence": %%r}'
    template = head + ", ".join(answer % q for q in names) + "}}\n"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n_rows):
            pick = "a" if (i + flip) % 3 else "b"
            handle.write(template % ((i,) + (pick, (i % 97) / 97.0) * qids))
    return path


def popen(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "laya_cases_cli", *args], cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def staging_areas(wh: Path) -> List[Path]:
    staging = wh / "_staging"
    return sorted(staging.iterdir()) if staging.is_dir() else []


def staged_data(wh: Path) -> bool:
    """A staging area holds a Parquet file being written (`*.parquet.tmp`) with a row group in it (more
    than the 4-byte magic); no file named `*.parquet` there is incomplete (a root glob never meets a torn one)."""
    for area in staging_areas(wh):
        for done in area.rglob("*.parquet"):
            pq.read_metadata(str(done))
    return any(p.stat().st_size > 4 for area in staging_areas(wh) for p in area.rglob("*.parquet*"))


class HeldCommitLock:
    """Hold the warehouse's commit lock so that writers pile up at their commit, then let go."""

    def __init__(self, wh: Path):
        wh.mkdir(parents=True, exist_ok=True)
        self._handle = open(wh / ".commit.lock", "a+")
        lock(self._handle.fileno())

    def release(self) -> None:
        if not self._handle.closed:
            unlock(self._handle.fileno())
            self._handle.close()


def runs_json(wh: Path) -> List[Dict[str, object]]:
    return json.loads(cli("runs", "-w", str(wh), "--format", "json", check=True).stdout)


def sql_json(wh: Path, query: str) -> List[Dict[str, object]]:
    return json.loads(cli("sql", query, "-w", str(wh), "--format", "json", check=True).stdout)


def case_counts(wh: Path) -> Dict[str, int]:
    return {r["run_id"]: r["n"] for r in sql_json(wh, "SELECT run_id, count(*) AS n FROM cases GROUP BY run_id")}


@pytest.fixture(scope="module")
def big_answers(tmp_path_factory) -> Path:
    """300k rows: several flushes of the ingest buffer, so a kill lands mid-write."""
    return write_answers(tmp_path_factory.mktemp("big") / "big.answers.jsonl", 300_000)


@pytest.fixture()
def store(tmp_path) -> Path:
    wh = tmp_path / "wh"
    cli("ingest", str(SUPPORT_ANSWERS), "-w", str(wh), "--run-id", "base", check=True)
    return wh


# ---------------------------------------------------------------------------- (a) crashes
@pytest.mark.slow
def test_kill_9_during_ingest_leaves_no_visible_partial_run(store, big_answers, tmp_path):
    """kill -9 while the run's rows are being staged: readers see exactly the runs committed before,
    reports and SQL still work, and gc removes the dead writer's staging area."""
    report_before = tmp_path / "before.json"
    cli("report", "base", "-w", str(store), "--json", str(report_before), check=True)
    runs_before = runs_json(store)
    counts_before = case_counts(store)
    assert [r["run_id"] for r in runs_before] == ["base"]

    proc = popen("ingest", str(big_answers), "-w", str(store), "--run-id", "killed")
    try:
        wait_for(lambda: staged_data(store), [proc], "rows staged by the writer")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()                      # reap it: a zombie would still look alive to gc
    assert proc.returncode == -signal.SIGKILL
    assert len(staging_areas(store)) == 1 and staged_data(store)   # the kill left its debris behind

    assert runs_json(store) == runs_before
    assert case_counts(store) == counts_before
    assert not (store / "cases" / "run_id=killed").exists()
    assert not (store / "runs" / "run_id=killed").exists()
    report_after = tmp_path / "after.json"
    cli("report", "base", "-w", str(store), "--json", str(report_after), check=True)
    assert report_after.read_text() == report_before.read_text()
    gone = cli("report", "killed", "-w", str(store))
    assert gone.returncode == 2 and "unknown run id 'killed'" in gone.stderr

    out = cli("gc", "-w", str(store), check=True).stdout.splitlines()
    assert out[-1] == "removed 1 staging area(s), 0 orphan partition(s)"
    assert len(out) == 2 and out[0].startswith(str(store / "_staging" / "killed."))     # the path it removed
    assert staging_areas(store) == []
    assert runs_json(store) == runs_before
    # the id was never taken: a later ingest may use it
    cli("ingest", str(SUPPORT_ANSWERS), "-w", str(store), "--run-id", "killed", check=True)
    assert [r["run_id"] for r in runs_json(store)] == ["base", "killed"]


_TORN_COMMIT = textwrap.dedent("""
    import os, sys
    from laya_cases.core import dataset as D
    from laya_cases.record.decisions import DecisionBuffer
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(sys.argv[1])
    buffer = DecisionBuffer()
    for row in D.iter_rows(sys.argv[2]):
        for pos, qid in enumerate(row.expected):
            buffer.add_case(row, pos, qid, row.raw["answers"][qid])
    with wh.stage("torn") as staged:
        staged.write(buffer.take())
        staged.close()
        wh.cases_dir.mkdir(parents=True, exist_ok=True)
        os.rename(staged.cases_path, wh.cases_dir / "run_id=torn")   # the first commit rename only
        os._exit(0)                                                   # die before the runs entry
""")


def _tear_a_commit(wh: Path) -> None:
    subprocess.run([sys.executable, "-c", _TORN_COMMIT, str(wh), str(SUPPORT_ANSWERS)], check=True, cwd=str(ROOT))
    assert any((wh / "cases" / "run_id=torn").glob("*.parquet"))   # the orphan partition is really there
    assert len(staging_areas(wh)) == 1


@pytest.mark.slow
def test_crash_between_commit_renames_is_invisible_and_gc_removes_orphan(store):
    """Cases renamed in, runs entry never written: the run does not exist for any reader; gc removes
    both the orphan partition and the dead staging area."""
    runs_before, counts_before = runs_json(store), case_counts(store)
    _tear_a_commit(store)
    assert runs_json(store) == runs_before
    assert case_counts(store) == counts_before
    assert sql_json(store, "SELECT count(*) AS n FROM decisions WHERE run_id = 'torn'") == [{"n": 0}]
    missing = cli("report", "torn", "-w", str(store))
    assert missing.returncode == 2 and "unknown run id 'torn'" in missing.stderr

    debris = [str(staging_areas(store)[0]), str(store / "cases" / "run_id=torn")]
    out = cli("gc", "-w", str(store), check=True).stdout.splitlines()
    assert out == debris + ["removed 1 staging area(s), 1 orphan partition(s)"]
    assert not (store / "cases" / "run_id=torn").exists()
    assert staging_areas(store) == []
    assert sorted(p.name for p in (store / "cases").iterdir()) == ["run_id=base"]
    assert cli("gc", "-w", str(store), check=True).stdout.strip() == "removed 0 staging area(s), 0 orphan partition(s)"


@pytest.mark.slow
def test_commit_over_a_torn_partition_replaces_it(store):
    """A later writer of the same id replaces the orphan (no gc in between); nothing of the torn rows remains."""
    _tear_a_commit(store)
    small = write_answers(store.parent / "small.jsonl", 7, qids=2)
    cli("ingest", str(small), "-w", str(store), "--run-id", "torn", check=True)
    assert case_counts(store) == {"base": case_counts(store)["base"], "torn": 14}
    assert {r["run_id"]: r["n_cases"] for r in runs_json(store)}["torn"] == 14
    assert staging_areas(store) == []            # the commit also swept the dead writer's staging area


# ---------------------------------------------------------------------------- (b) concurrent writers
@pytest.mark.slow
@pytest.mark.parametrize("explicit_ids", [True, False], ids=["explicit-ids", "default-ids"])
def test_eight_concurrent_ingests_all_land(tmp_path, explicit_ids):
    """8 writers staged at once and released together at the commit lock: every run lands whole."""
    wh = tmp_path / "wh"
    files = [write_answers(tmp_path / ("a%d.jsonl" % i), 40 + 7 * i, qids=1 + i % 3, flip=i) for i in range(8)]
    expected_cases = [(40 + 7 * i) * (1 + i % 3) for i in range(8)]
    lock = HeldCommitLock(wh)
    procs = []
    try:
        for i, path in enumerate(files):
            args = ["ingest", str(path), "-w", str(wh)] + (["--run-id", "run-%d" % i] if explicit_ids else [])
            procs.append(popen(*args))
        wait_for(lambda: len(staging_areas(wh)) == 8, procs, "8 writers staging at once")
    finally:
        lock.release()
    results = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in results]
    run_ids = [out.strip() for out, _ in results]
    if explicit_ids:
        assert run_ids == ["run-%d" % i for i in range(8)]
    assert len(set(run_ids)) == 8

    by_id = {r["run_id"]: r for r in runs_json(wh)}
    assert sorted(by_id) == sorted(run_ids)
    for rid, n_cases, path in zip(run_ids, expected_cases, files):
        assert by_id[rid]["n_cases"] == n_cases
        assert by_id[rid]["n_errors"] == 0
    assert case_counts(wh) == dict(zip(run_ids, expected_cases))
    assert staging_areas(wh) == []
    assert sorted(p.name for p in (wh / "cases").iterdir()) == sorted("run_id=" + r for r in run_ids)


# ---------------------------------------------------------------------------- (c) same id twice
@pytest.mark.slow
def test_two_concurrent_ingests_with_one_run_id_exactly_one_wins(tmp_path):
    """Both writers pass the early existence check and meet at the commit: the second is refused
    (exit 2, one clear line), the winner's rows are the run's rows, and nothing is left behind."""
    wh = tmp_path / "wh"
    files = [write_answers(tmp_path / "a.jsonl", 30, qids=1), write_answers(tmp_path / "b.jsonl", 50, qids=2)]
    lock = HeldCommitLock(wh)
    try:
        procs = [popen("ingest", str(f), "-w", str(wh), "--run-id", "dup") for f in files]
        wait_for(lambda: len(staging_areas(wh)) == 2, procs, "both writers staging")
    finally:
        lock.release()
    results = [p.communicate() for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 2], results
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    assert results[winner][0].strip() == "dup"
    err = results[loser][1]
    assert err.count("\n") == 1 and err.startswith("laya-cases: ")
    assert "run id 'dup' already exists" in err
    assert results[loser][0] == ""

    runs = runs_json(wh)
    assert [r["run_id"] for r in runs] == ["dup"]
    assert runs[0]["n_cases"] == [30, 100][winner]
    assert case_counts(wh) == {"dup": [30, 100][winner]}
    assert staging_areas(wh) == []


# ---------------------------------------------------------------------------- (d) run id validation
@pytest.fixture(scope="module")
def readonly_store(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("ro") / "wh"
    inprocess.cli("ingest", str(SUPPORT_ANSWERS), "-w", str(wh), "--run-id", "base", check=True)
    return wh


@pytest.mark.slow   # 14 CLI runs (in this process: they check the refusal, not the process)
@pytest.mark.parametrize("bad_id", ["../x", "a/b", "", ".hidden", "a" * 129, "a..b", "-x"],
                         ids=["dotdot", "slash", "empty", "leading-dot", "too-long", "inner-dotdot", "dash"])
def test_invalid_run_id_is_refused_and_nothing_is_written(tmp_path, readonly_store, bad_id):
    """A run id names a directory: anything that could escape or hide it is a usage error (exit 2),
    refused before the store (or a new store's directory) is touched."""
    fresh = tmp_path / "fresh"
    before = snapshot_tree(readonly_store)
    for wh in (fresh, readonly_store):
        proc = inprocess.cli("ingest", str(SUPPORT_ANSWERS), "-w", str(wh), "--run-id=" + bad_id)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("laya-cases: invalid run id ")
    assert not fresh.exists()
    assert snapshot_tree(readonly_store) == before
    assert not (tmp_path / "x").exists() and not (readonly_store.parent / "x").exists()


@pytest.mark.slow
def test_longest_valid_run_id_is_accepted(tmp_path):
    """The boundary of the rule above: 128 characters starting with a letter or digit."""
    rid = "a" * 64 + "._-" + "b" * 61
    assert len(rid) == 128
    wh = tmp_path / "wh"
    proc = inprocess.cli("ingest", str(SUPPORT_ANSWERS), "-w", str(wh), "--run-id", rid, check=True)
    assert proc.stdout.strip() == rid
    assert [r["run_id"] for r in runs_json(wh)] == [rid]
