"""A same-schema Parquet file that no commit wrote, in a committed run's partition (issue 27 item 5).

Readers count each run's records from the footers (rows, and the null counts of `error` and `qid` in the
column statistics) against the runs row, so such a file makes the run damaged for every reader: `report`
of it exits 2 with one line naming the partition's files, `runs` and `sql` leave it out with a warning,
and the other runs report byte for byte as before. Generated: several kinds of copied rows (the run's
intent rows, one case, every record, an error record, an empty-row record) under a writer's name and a
foreign one, in runs with and without errors and empty rows.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from helpers import ROOT, snapshot_tree, write_jsonl
from test_bad_input import run_cli

ANSWERS = ROOT / "data" / "support.answers.jsonl"
PICKS = {"intent-rows": "qid = 'intent'", "one-case": "qid IS NOT NULL LIMIT 1", "every-record": "true",
         "an-error": "error IS NOT NULL LIMIT 1", "an-empty-row": "error IS NULL AND qid IS NULL LIMIT 1"}
NAMES = ["part-00009.parquet", "x_0.parquet"]


def _mixed_answers(path: Path) -> Path:
    """The bundled answers plus a row without questions (an empty record) and a row whose answer is
    missing (an error record under --on-error skip semantics of ingest: recorded as an error)."""
    rows = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    rows.append({"state": "nothing asked", "questions": {}, "expected": {}, "answers": {}})
    return write_jsonl(path, rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("foreign")
    wh = base / "wh"
    for rid, answers in (("a", ANSWERS), ("b", ANSWERS), ("m", _mixed_answers(base / "mixed.jsonl"))):
        code, _, err = run_cli("ingest", str(answers), "-w", str(wh), "--run-id", rid)
        assert code == 0, err
    reports = {}
    for rid in ("a", "b", "m"):
        code, out, _ = run_cli("report", rid, "-w", str(wh), "--json", "-")
        assert code == 0
        reports[rid] = out
    return wh, reports


@pytest.mark.parametrize("name", [NAMES[0], *(pytest.param(n, marks=pytest.mark.slow) for n in NAMES[1:])])
@pytest.mark.parametrize("pick", [p if p in ("one-case", "an-empty-row") else pytest.param(p, marks=pytest.mark.slow)
                                  for p in sorted(PICKS)])
@pytest.mark.parametrize("victim", ["a", pytest.param("m", marks=pytest.mark.slow)])   # slow: 4 CLI calls each
@pytest.mark.slow
def test_a_foreign_file_damages_its_run_only(store, tmp_path, victim, pick, name):
    wh, reports = store
    source = wh / "cases" / ("run_id=%s" % victim) / "part-00000.parquet"
    rows = duckdb.sql("SELECT count(*) FROM (FROM read_parquet('%s') WHERE %s)" % (source, PICKS[pick])).fetchall()[0][0]
    if rows == 0:
        pytest.skip("run %s has no such record" % victim)
    foreign = source.parent / name
    duckdb.sql("COPY (SELECT * FROM read_parquet('%s') WHERE %s) TO '%s' (FORMAT parquet)"
               % (source, PICKS[pick], foreign))
    try:
        before = snapshot_tree(wh)
        code, out, err = run_cli("report", victim, "-w", str(wh))
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert name in err and "run %r is damaged" % victim in err
        other = "b" if victim == "a" else "a"
        code, out, _ = run_cli("report", other, "-w", str(wh), "--json", "-")
        assert code == 0 and out == reports[other]
        code, out, err = run_cli("sql", "SELECT DISTINCT run_id FROM cases ORDER BY 1", "-w", str(wh), "--format", "csv")
        assert code == 0 and victim not in out.split() and "warning: run %r is damaged" % victim in err
        assert snapshot_tree(wh) == before
    finally:
        foreign.unlink()
    code, out, _ = run_cli("report", victim, "-w", str(wh), "--json", "-")
    assert code == 0 and out == reports[victim]


def test_every_healthy_kind_of_run_passes(store):
    wh, _ = store
    code, out, err = run_cli("runs", "-w", str(wh), "--format", "csv")
    assert code == 0 and err == "" and [line.split(",")[0] for line in out.splitlines()[1:]] == ["a", "b", "m"]


def test_a_runs_file_swapped_with_another_runs_is_named(tmp_path):
    """Another run's run.parquet copied into a runs entry: the run is damaged for every reader (it was a
    traceback in `report`, and `runs` listed the other run twice)."""
    wh = tmp_path / "wh"
    for rid in ("a", "b"):
        assert run_cli("ingest", str(ANSWERS), "-w", str(wh), "--run-id", rid)[0] == 0
    (wh / "runs" / "run_id=a" / "run.parquet").write_bytes((wh / "runs" / "run_id=b" / "run.parquet").read_bytes())
    code, _, err = run_cli("report", "a", "-w", str(wh))
    assert code == 2 and err.splitlines() == ["laya-cases: run 'a' is damaged: %s: run_id is 'b', not the "
                                              "directory's 'a' (see `laya-cases check`)"
                                              % (wh / "runs" / "run_id=a" / "run.parquet")]
    code, out, err = run_cli("runs", "-w", str(wh), "--format", "csv")
    assert code == 0 and [line.split(",")[0] for line in out.splitlines()[1:]] == ["b"] and "'a' is damaged" in err


def test_a_commit_lock_that_is_a_directory_is_one_line_and_nothing_is_staged(tmp_path):
    (tmp_path / "wh" / ".commit.lock").mkdir(parents=True)
    code, _, err = run_cli("ingest", str(ANSWERS), "-w", str(tmp_path / "wh"))
    assert code == 2 and err.splitlines() == ["laya-cases: %s is not a file: the warehouse's commit lock must be one "
                                              "(remove it)" % (tmp_path / "wh" / ".commit.lock")]
    assert sorted(p.name for p in (tmp_path / "wh").iterdir()) == [".commit.lock"]


@pytest.mark.parametrize("entry", ["runs", "cases"])
def test_an_unreadable_entry_is_named_and_the_rest_is_read(tmp_path, monkeypatch, entry):
    """A run directory of mode 000 (simulated: the tests run as root, which no mode stops): every look
    inside it fails with EACCES. `runs`, `sql` and `check` name run a and read run b; `report b` works."""
    import errno

    wh = tmp_path / "wh"
    for rid in ("a", "b"):
        assert run_cli("ingest", str(ANSWERS), "-w", str(wh), "--run-id", rid)[0] == 0
    locked = str(wh / entry / "run_id=a") + os.sep
    denied = OSError(errno.EACCES, "Permission denied")

    def guard(real):
        def call(path, *args, **kwargs):
            if str(path).startswith(locked) or str(path) + os.sep == locked and real is os.listdir:
                raise PermissionError(denied.errno, denied.strerror, str(path))
            return real(path, *args, **kwargs)
        return call
    monkeypatch.setattr(os, "stat", guard(os.stat))
    monkeypatch.setattr(os, "listdir", guard(os.listdir))
    code, out, err = run_cli("runs", "-w", str(wh), "--format", "csv")
    assert code == 0 and [line.split(",")[0] for line in out.splitlines()[1:]] == ["b"], err
    assert "run 'a' is damaged" in err and "Traceback" not in err
    code, out, err = run_cli("sql", "SELECT DISTINCT run_id FROM cases", "-w", str(wh), "--format", "csv")
    assert code == 0 and out.split() == ["run_id", "b"] and "Traceback" not in err
    code, out, _ = run_cli("report", "b", "-w", str(wh))
    assert code == 0 and out.startswith("aurc")
    code, out, err = run_cli("check", "-w", str(wh))
    assert code == 1 and "run_id=a" in out and "Traceback" not in err
