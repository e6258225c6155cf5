"""Only the store writes into the store (issue 27 items 1 and 3; laya_cases/store/outputs.py, cli/app.py).

Every option that writes a file or folder is one of cli.app.OUTPUT_FLAGS and is checked, before the command
does anything, by one function. The walk below fails when a FILE/DIR option is neither an output nor a
declared input. Generated: each writing command x each output option x {the store root, a cases
partition, a file in it, a runs entry, a symlink into the store, a `..` path into it, a Delta store's
_delta_log}: exit 2, one stderr line naming the option and the warehouse, no traceback, the store's tree
unchanged, no run committed (the model never loads: the check runs first).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import typer

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases_cli.app import OUTPUT_FLAGS, app
from test_bad_input import run_cli

SUPPORT = str(ROOT / "data" / "support.jsonl")
ANSWERS = str(ROOT / "data" / "support.answers.jsonl")
#: options that name something read, never written
INPUTS = {"--dataset", "--gate-policy", "--warehouse", "--onnx", "--subfolder", "--source", "--data", "--states",
          "--manifest", "--data-root", "--template"}
#: a command line for each command, before its output option; none of them gets as far as reading the store
BASE: Dict[str, List[str]] = {
    "report": ["report", "a"], "run": ["run", SUPPORT], "ingest": ["ingest", ANSWERS, "--min-accuracy", "0.1"],
    "plot": ["plot", "a"], "sql": ["sql", "SELECT 1", "--format", "csv"], "compare": ["compare", "a", "--baseline", "a"],
    "diff": ["diff", "a", "a"], "rank": ["rank", "a", "b"], "calibrate": ["calibrate", "--fit", "a", "--apply", "b"],
    "stability": ["stability", "a", "b"],
    "audit": ["audit", "--runs", "a,b"], "export": ["export", "a"], "export-onnx": ["export-onnx"],
    "shortlist": ["shortlist", SUPPORT], "banking77": ["banking77"], "presentation": ["presentation"],
    "robustness": ["robustness", SUPPORT], "crosslingual": ["crosslingual", "a"],
    "relevance export": ["relevance", "export"], "relevance leaderboard": ["relevance", "leaderboard"],
    "massive dataset": ["massive", "dataset", "en-US"], "massive run": ["massive", "run"],
    "massive report": ["massive", "report", "a"], "dataset from-hf": ["dataset", "from-hf", SUPPORT, "--state", "s",
                                                                        "--label", "l"],
    "dataset to-hf": ["dataset", "to-hf", "a"], "dataset examples": ["dataset", "examples"],
}


def _options() -> List[Tuple[str, str, str, bool]]:
    """(command, flag, metavar, takes -w) of every option that is a path, walking the whole app."""
    found = []

    def walk(group, prefix: str) -> None:
        for name, sub in getattr(group, "commands", {}).items():
            if getattr(sub, "commands", None):
                walk(sub, prefix + name + " ")
                continue
            opts = [p for p in sub.params if p.param_type_name == "option"]
            has_w = any("--warehouse" in p.opts for p in opts)
            for p in opts:
                if p.metavar in ("FILE", "DIR", "PATH") or OUTPUT_FLAGS.intersection(p.opts):
                    flag = next(o for o in p.opts if o.startswith("--"))
                    found.append((prefix + name, flag, p.metavar, has_w))
    walk(typer.main.get_command(app), "")
    return found


OUTPUTS = [(c, f, m, w) for c, f, m, w in _options() if f in OUTPUT_FLAGS]


def test_every_path_option_is_an_output_or_a_declared_input():
    unknown = [(c, f) for c, f, _, _ in _options() if f not in OUTPUT_FLAGS and f not in INPUTS]
    assert unknown == [], "classify these in cli/app.py OUTPUT_FLAGS or here as inputs: %s" % unknown
    assert {c for c, _, _, _ in OUTPUTS} <= set(BASE), "add a command line for: %s" % (
        {c for c, _, _, _ in OUTPUTS} - set(BASE))
    assert len(OUTPUTS) >= 35


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """base/warehouse (local, run a) and base/dwh (Delta, run d); base/link -> warehouse/cases."""
    base = tmp_path_factory.mktemp("outputs")
    code, _, err = run_cli("ingest", ANSWERS, "-w", str(base / "warehouse"), "--run-id", "a")
    assert code == 0, err
    pytest.importorskip("deltalake")
    code, _, err = run_cli("ingest", ANSWERS, "-w", "delta+file://%s" % (base / "dwh"), "--run-id", "d")
    assert code == 0, err
    (base / "link").symlink_to(base / "warehouse" / "cases")
    (base / "elsewhere").mkdir()
    return base


PLACES = {"root": "warehouse", "partition": "warehouse/cases/run_id=a",
          "file-in-partition": "warehouse/cases/run_id=a/part-00000.parquet",
          "runs-entry": "warehouse/runs/run_id=a/run.parquet", "symlink": "link/run_id=a/out.json",
          "dotdot": "elsewhere/../warehouse/cases/run_id=a/x.json", "delta-log": "dwh/cases/_delta_log/00000000000000000009.json"}


@pytest.mark.parametrize("place", [p if p in ("root", "file-in-partition", "dotdot") else pytest.param(p, marks=pytest.mark.slow)
                                   for p in sorted(PLACES)])   # slow: one CLI call per flag and place
@pytest.mark.parametrize("command,flag,metavar,has_w", OUTPUTS, ids=["%s %s" % (c, f) for c, f, _, _ in OUTPUTS])
def test_no_output_lands_in_a_store(home, monkeypatch, command, flag, metavar, has_w, place):
    if place == "delta-log" and not has_w:
        pytest.skip("the command sees no warehouse option: only ./warehouse")
    monkeypatch.chdir(home)
    monkeypatch.delenv("LAYA_CASES_WAREHOUSE", raising=False)
    warehouse = ["-w", "delta+file://%s" % (home / "dwh")] if place == "delta-log" else (["-w", "warehouse"] if has_w else [])
    before = {name: snapshot_tree(home / name) for name in ("warehouse", "dwh", "elsewhere")}
    code, out, err = run_cli(*BASE[command], flag, PLACES[place], *warehouse)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, (command, flag, err)
    assert lines[0].startswith("laya-cases: %s " % flag) and "the warehouse" in lines[0], lines
    assert {name: snapshot_tree(home / name) for name in before} == before


@pytest.mark.parametrize("target,needle", [("/proc/x.json", "not a place to write to"), (".", "above"),
                                           ("no/such/dir/x.json", "cannot write there"),
                                           ("elsewhere", "is a directory; name a file")])
@pytest.mark.parametrize("command", ["run", "robustness", "shortlist", "massive run"])
def test_an_unwritable_output_is_refused_before_the_model_loads(home, monkeypatch, command, target, needle):
    monkeypatch.chdir(home)
    before = snapshot_tree(home / "warehouse")
    code, _, err = run_cli(*BASE[command], "--json", target, "-w", "warehouse")
    assert code == 2 and needle in err and len(err.splitlines()) == 1, err
    assert snapshot_tree(home / "warehouse") == before


@pytest.mark.slow
def test_outputs_beside_the_store_still_work(home, monkeypatch, tmp_path):
    monkeypatch.chdir(home)
    code, out, err = run_cli("report", "a", "-w", "warehouse", "--json", str(tmp_path / "a.json"))
    assert code == 0 and (tmp_path / "a.json").stat().st_size > 0, err
    code, out, _ = run_cli("report", "a", "-w", "warehouse", "--json", "-")
    assert code == 0 and out.startswith("{")
    code, _, err = run_cli("plot", "a", "-w", "warehouse", "--out", ".")      # a folder that holds the store
    assert code == 0 and os.path.exists("reliability.png"), err
