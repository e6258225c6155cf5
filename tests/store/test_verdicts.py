"""The footer check's healthy verdicts kept between processes (store/verdicts.py, issue 30).

A run found healthy is not read again while every one of its files gives the same stat key; anything that
changes a file (truncation, an in-place rewrite of the footer, a foreign file, a swapped file) changes the
key, and the run is checked, and named, again. Fresh files are never remembered (their timestamps could
still coincide with a rewrite's), a corrupt cache is a miss, and the store itself is never written.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases.query.sql import connect
from laya_cases.store import check, local, verdicts
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

pytestmark = pytest.mark.slow          # each test ingests or copies a store and connects to it twice or more

ANSWERS = ROOT / "data" / "support.answers.jsonl"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("verdicts") / "wh"
    for rid in ("a", "b"):
        result = CliRunner().invoke(app, ["ingest", str(ANSWERS), "-w", str(wh), "--run-id", rid])
        assert result.exit_code == 0, result.stderr
    return wh


@pytest.fixture
def store(base, tmp_path, monkeypatch) -> Path:
    """A copy of the base store, a cache folder of its own, and every file taken as settled."""
    wh = tmp_path / "wh"
    shutil.copytree(base, wh)
    monkeypatch.setenv(verdicts.CHECK_CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(verdicts, "RACY_NS", -10 ** 15)
    past = time.time_ns() - 10 ** 10     # the copies dated 10 s back: a damage below changes the mtime
    for path in wh.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(past, past))
    return wh


def fresh_process() -> None:
    check._FOOTERS.clear()
    check._COUNTS.clear()


def listed(wh: Path):
    fresh_process()
    w = Warehouse(wh)
    con = connect(w, functions=False, runs_only=True)
    return [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()], w.damaged


def verdict_files(tmp_path: Path):
    return [p for p in (tmp_path / "cache").glob("*.json") if not p.name.endswith(".runs.json")]


def cache_runs(tmp_path: Path) -> dict:
    files = verdict_files(tmp_path)
    return json.loads(files[0].read_text())["runs"] if files else {}


def test_run_key_names_the_files_the_check_reads(store):
    wh = Warehouse(store)
    for rid in ("a", "b"):
        names = [row[0] for row in wh._run_key(rid)]
        assert names == [str(p.relative_to(store)) for p in check.run_files(wh, rid)]
    shutil.rmtree(store / "cases" / "run_id=b")
    assert wh._run_key("b") is None                       # no case file: checked, and named, every time


def test_a_remembered_run_is_not_read_again(store, tmp_path, monkeypatch):
    assert listed(store) == (["a", "b"], {})
    assert sorted(cache_runs(tmp_path)) == ["a", "b"]

    def unexpected(*args, **kwargs):
        raise AssertionError("a remembered run's footers were read again")
    monkeypatch.setattr(local, "run_problem", unexpected)
    monkeypatch.setattr(local, "prefetch", unexpected)
    assert listed(store) == (["a", "b"], {})


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _footer_in_place(path: Path) -> None:
    """Same size, same inode: the footer's bytes overwritten where they are."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size - 40)
        handle.write(b"\xff" * 32)
    assert path.stat().st_size == size


def _foreign_file(path: Path) -> None:
    duckdb.sql("COPY (SELECT * FROM read_parquet('%s') LIMIT 1) TO '%s' (FORMAT parquet)"
               % (path, path.parent / "part-00001.parquet"))


def _swapped(path: Path) -> None:
    """A same-schema file holding a null qid in a case record (a required column's null count breaks the
    runs row's counts), put in place by rename, as a writer would."""
    tmp = path.parent / "tmp.parquet.partial"
    duckdb.sql("COPY (SELECT * REPLACE (CASE WHEN qid IS NOT NULL AND error IS NULL THEN NULL ELSE qid END AS qid) "
               "FROM read_parquet('%s')) TO '%s' (FORMAT parquet)" % (path, tmp))
    os.replace(tmp, path)


def _old_times_kept(path: Path) -> None:
    """An in-place rewrite that puts the old mtime back (only ctime, which no user can set, still moves)."""
    st = path.stat()
    _footer_in_place(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("damage", [_truncate, _footer_in_place, _foreign_file, _swapped, _old_times_kept])
def test_damage_after_the_verdict_is_caught(store, tmp_path, damage):
    assert listed(store) == (["a", "b"], {})
    damage(store / "cases" / "run_id=b" / "part-00000.parquet")
    ids, damaged = listed(store)
    assert ids == ["a"] and list(damaged) == ["b"], damaged
    assert sorted(cache_runs(tmp_path)) == ["a"]          # a damaged run is never remembered
    assert listed(store)[0] == ["a"]


def test_a_damaged_run_file_after_the_verdict_is_caught(store):
    assert listed(store) == (["a", "b"], {})
    (store / "runs" / "run_id=b" / "run.parquet").write_bytes((store / "runs" / "run_id=a" / "run.parquet").read_bytes())
    ids, damaged = listed(store)
    assert ids == ["a"] and "run_id is 'a'" in damaged["b"]


def test_fresh_files_are_not_remembered(store, tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "RACY_NS", 3 * 10 ** 9)
    os.utime(store / "cases" / "run_id=a" / "part-00000.parquet")       # a file written just now
    assert listed(store) == (["a", "b"], {})
    assert cache_runs(tmp_path) == {}                    # every file of the copy is fresh (ctime: now)


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"format": 1, "runs": []}', b"\xff\xfe"])
def test_a_corrupt_cache_is_a_miss(store, tmp_path, garbage):
    assert listed(store) == (["a", "b"], {})
    path = verdict_files(tmp_path)[0]
    path.write_bytes(garbage)
    _truncate(store / "cases" / "run_id=a" / "part-00000.parquet")
    ids, damaged = listed(store)
    assert ids == ["b"] and list(damaged) == ["a"]
    assert sorted(cache_runs(tmp_path)) == ["b"]


def test_the_store_is_never_written_and_the_cache_can_be_off(store, tmp_path, monkeypatch):
    before = snapshot_tree(store)
    listed(store)
    listed(store)
    assert snapshot_tree(store) == before
    assert not any(p.name.endswith((".json", ".tmp")) for p in store.rglob("*"))
    monkeypatch.setenv(verdicts.CHECK_CACHE_ENV, "off")
    assert verdicts.cache_dir() is None
    shutil.rmtree(tmp_path / "cache")
    assert listed(store) == (["a", "b"], {}) and not (tmp_path / "cache").exists()
    monkeypatch.setenv(verdicts.CHECK_CACHE_ENV, str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    assert listed(store) == (["a", "b"], {})             # a cache that cannot be written is skipped


# ---------------------------------------------------------------------------- the kept runs rows
def rows(wh: Path):
    fresh_process()
    con = connect(Warehouse(wh), functions=False, runs_only=True)
    return con.execute("SELECT * FROM runs ORDER BY run_id").fetchall()


def test_kept_rows_are_the_files_rows_and_follow_a_changed_run_file(store, tmp_path, monkeypatch):
    truth = rows(store)                                   # read from the files, then kept
    assert len(list((tmp_path / "cache").glob("*.parquet"))) == 1
    assert rows(store) == truth                           # read from the kept rows
    run_b = store / "runs" / "run_id=b" / "run.parquet"
    tmp = run_b.parent / "new.parquet.partial"
    duckdb.sql("COPY (SELECT * REPLACE ('another-model' AS model_id) FROM read_parquet('%s')) TO '%s' (FORMAT parquet)"
               % (run_b, tmp))
    os.replace(tmp, run_b)
    changed = rows(store)
    assert [r[0] for r in changed] == ["a", "b"] and changed[0] == truth[0] and "another-model" in changed[1]
    assert rows(store) == changed                         # the new row kept in turn
    assert len(list((tmp_path / "cache").glob("*.parquet"))) == 1          # the old file removed
    monkeypatch.setenv(verdicts.CHECK_CACHE_ENV, "off")
    assert rows(store) == changed


@pytest.mark.parametrize("damage", ["bytes", "missing"])
def test_a_damaged_rows_file_is_a_miss(store, tmp_path, damage):
    truth = rows(store)
    kept = next((tmp_path / "cache").glob("*.parquet"))
    if damage == "bytes":
        kept.write_bytes(kept.read_bytes()[:-10] + b"0123456789")
    else:
        kept.unlink()
    assert rows(store) == truth
    assert rows(store) == truth


def test_a_new_run_is_listed_beside_the_kept_rows(store, base, tmp_path):
    truth = rows(store)
    shutil.copytree(base / "runs" / "run_id=b", store / "runs" / "run_id=c")
    shutil.copytree(base / "cases" / "run_id=b", store / "cases" / "run_id=c")
    shutil.copytree(base / "slice_sets" / "run_id=b", store / "slice_sets" / "run_id=c")
    ids, damaged = listed(store)          # c's run.parquet says run_id b: damaged, and named
    assert ids == ["a", "b"] and list(damaged) == ["c"]
    shutil.rmtree(store / "runs" / "run_id=b")            # b gone: its kept row is not listed
    assert rows(store) == truth[:1]
