"""One directory holds one kind of store (issue 27 item 4; laya_cases/store/kind.py).

A local warehouse and Delta tables in one folder used to both succeed, then `gc` of the local kind deleted
the Delta run's data as orphans. Now each writer, reader and `gc` refuses a folder the other kind has
written, in one line naming the `-w` to use, and writes nothing; a Delta report whose data files are gone
is one line, not a traceback.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, snapshot_tree
from test_bad_input import run_cli

pytest.importorskip("deltalake")
ANSWERS = str(ROOT / "data" / "support.answers.jsonl")


def _local(p: Path) -> str:
    return str(p)


def _delta(p: Path) -> str:
    return "delta+file://%s" % p


KIND = {"local": _local, "delta": _delta}
COMMANDS = {"ingest": ["ingest", ANSWERS, "--run-id", "x"], "runs": ["runs"], "report": ["report", "r"],
            "sql": ["sql", "SELECT count(*) FROM cases"], "gc": ["gc"], "diff": ["diff", "r", "r"],
            "export": ["export", "r", "--out", "-"]}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    base = tmp_path_factory.mktemp("kinds")
    for kind, fn in KIND.items():
        code, _, err = run_cli("ingest", ANSWERS, "-w", fn(base / kind), "--run-id", "r")
        assert code == 0, err
    return base


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("written,asked", [("local", "delta"), ("delta", "local")])
def test_the_other_kind_is_refused_and_nothing_is_written(stores, written, asked, command):
    folder = stores / written
    before = snapshot_tree(folder)
    code, out, err = run_cli(*COMMANDS[command], "-w", KIND[asked](folder))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (command, err)
    want = "is a Delta store: use -w delta+file://" if written == "delta" else "is a local warehouse: use -w /"
    assert want in lines[0], lines
    assert snapshot_tree(folder) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_both_kinds_in_one_folder_are_named_and_left_alone(tmp_path, command):
    folder = tmp_path / "mix"
    assert run_cli("ingest", ANSWERS, "-w", str(folder), "--run-id", "r")[0] == 0
    (folder / "cases" / "_delta_log").mkdir()          # what a Delta writer of an older laya-cases left
    before = snapshot_tree(folder)
    for asked in KIND.values():
        code, _, err = run_cli(*COMMANDS[command], "-w", asked(folder))
        assert code == 2 and "holds both a local warehouse and Delta tables" in err and len(err.splitlines()) == 1
    assert snapshot_tree(folder) == before


@pytest.mark.slow
def test_each_kind_still_reads_and_cleans_its_own(stores):
    for kind, fn in KIND.items():
        assert run_cli("report", "r", "-w", fn(stores / kind))[0] == 0
        assert run_cli("gc", "-w", fn(stores / kind))[0] == 0


def test_a_delta_report_with_its_data_files_gone_is_one_line(tmp_path):
    url = _delta(tmp_path / "d")
    assert run_cli("ingest", ANSWERS, "-w", url, "--run-id", "r")[0] == 0
    for path in (tmp_path / "d" / "cases").rglob("*.parquet"):
        path.unlink()
    code, _, err = run_cli("report", "r", "-w", url)
    assert code == 2 and len(err.splitlines()) == 1 and "table cases is damaged" in err and "Traceback" not in err
