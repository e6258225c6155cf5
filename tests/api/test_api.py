"""The Python API (laya_cases/api.py): docs/python.md runs as written, and its promises hold."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, flipped_support_answers
from laya_cases.query.sql import connect

DOC = ROOT / "docs" / "python.md"
ANSWERS = ROOT / "data" / "support.answers.jsonl"
DATASET = ROOT / "data" / "support.jsonl"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    base = tmp_path_factory.mktemp("api")
    wh = Warehouse(base / "warehouse")
    ingest(wh, str(ANSWERS), run_id="demo", dataset_path=str(DATASET))
    ingest(wh, str(flipped_support_answers(base / "other.answers.jsonl")), run_id="other", dataset_path=str(DATASET))
    return base


@pytest.fixture()
def wh(home, monkeypatch):
    import laya_cases as lc

    monkeypatch.chdir(home)
    return lc.open("warehouse")


@pytest.mark.slow
def test_the_python_doc_runs_as_written(tmp_path, monkeypatch, capsys):
    """Its console block makes the two runs (the default model runs), then every Python block runs."""
    from docs_blocks import run_console

    text = DOC.read_text(encoding="utf-8")
    run_console(text, tmp_path)
    home = tmp_path
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(home)
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, "docs/python.md block %d" % (i + 1), "exec"), namespace)     # noqa: S102
    out = capsys.readouterr().out
    assert "unknown run id 'nope' in warehouse warehouse; known runs: demo, other" in out
    assert (home / "reliability.png").stat().st_size > 1000


def test_frames_are_polars(wh):
    import polars as pl

    runs = wh.runs()
    assert isinstance(runs, pl.DataFrame) and runs["run_id"].to_list() == ["demo", "other"]
    lazy = wh.cases("demo", lazy=True)
    assert isinstance(lazy, pl.LazyFrame)
    eager = wh.cases("demo")
    assert isinstance(eager, pl.DataFrame) and eager.height == runs.filter(pl.col("run_id") == "demo")["n_cases"][0]
    assert eager["run_id"].unique().to_list() == ["demo"] and eager["error"].null_count() == eager.height


@pytest.mark.slow
def test_report_is_the_cli_json_without_cases(wh, home):
    from laya_cases.report import build as R

    doc = wh.report("demo")
    assert "cases" not in doc
    full = R.build(connect(wh.warehouse, ["demo"]), "demo", R.Options(include_cases=False))
    full.pop("cases")
    assert json.dumps(doc, sort_keys=True, default=str) == json.dumps(full, sort_keys=True, default=str)
    only = wh.report("demo", slices=["language"])
    assert list(only["slices"]) == ["language"] and list(only["extensions"]["slices"]) == ["language"]


@pytest.mark.slow
def test_diff_and_plot(wh):
    from matplotlib.figure import Figure

    d = wh.diff("demo", "other", bootstrap=100)
    assert d["run_a"] == "demo" and d["right_to_wrong"] + d["wrong_to_right"] > 0
    figures = wh.plot("demo")
    assert sorted(figures) == ["reliability", "risk_coverage"]
    assert all(isinstance(f, Figure) for f in figures.values())


@pytest.mark.parametrize("call, needles", [
    (lambda wh: wh.report("nope"), ("unknown run id 'nope'", "known runs: demo, other")),
    (lambda wh: wh.cases("nope", lazy=True), ("unknown run id 'nope'", "demo, other")),
    (lambda wh: wh.diff("demo", "nope"), ("unknown run id 'nope'",)),
    (lambda wh: wh.plot("nope"), ("unknown run id 'nope'",)),
    (lambda wh: wh.cases("../x"), ("invalid run id",)),
    (lambda wh: wh.report("demo", slices=["colour"]), ("slices must name",)),
    (lambda wh: wh.report("demo", bootstrap=5), ("bootstrap",)),
    (lambda wh: wh.plot("demo", by="colour"), ("by must be one of",)),
    (lambda wh: wh.sql("DROP VIEW cases"), ("read-only",)),
    (lambda wh: wh.sql("SELECT nope FROM cases"), ("query failed",)),
], ids=["report", "cases", "diff", "plot", "bad-id", "slices", "bootstrap", "by", "write", "bad-sql"])
def test_mistakes_are_usage_errors(wh, call, needles):
    import laya_cases as lc

    with pytest.raises(lc.UsageError) as info:
        call(wh)
    assert all(n in str(info.value) for n in needles), str(info.value)


def test_a_file_is_not_a_warehouse(tmp_path):
    import laya_cases as lc

    (tmp_path / "f").write_text("x")
    with pytest.raises(lc.UsageError, match="not a directory"):
        lc.open(tmp_path / "f")
    assert lc.open(tmp_path / "new").runs().height == 0


def test_import_is_light_and_all_is_the_api():
    code = ("import sys, laya_cases as lc; assert callable(lc.open) and lc.Store and lc.UsageError; "
            "print(sorted(m for m in ('duckdb', 'polars', 'pyarrow', 'torch', 'matplotlib', 'pandas', 'numpy') "
            "if m in sys.modules)); print(sorted(lc.__all__))")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "['Store', 'UsageError', '__version__', 'from_hf', 'open', 'run_to_hf']"]


@pytest.mark.parametrize("asked,hint", [
    ("dmeo", "did you mean 'demo'?"),
    ("othr", "did you mean 'other'?"),
    ("zzz", "known runs: demo, other"),
])
def test_an_unknown_run_id_names_the_closest_known_ids(wh, asked, hint):
    with pytest.raises(Exception) as err:
        wh.report(asked)
    assert str(err.value) == "unknown run id %r in warehouse warehouse; %s" % (asked, hint)


def test_unknown_run_hint_with_many_runs_says_how_many_more():
    from laya_cases.store.layout import unknown_run_message

    known = ["run-%02d" % i for i in range(12)]
    assert unknown_run_message("zzz", "wh", known) == ("unknown run id 'zzz' in warehouse wh; known runs: run-07, "
                                                       "run-08, run-09, run-10, run-11 and 7 more (laya-cases runs)")
    assert unknown_run_message("run-3", "wh", known).endswith("did you mean 'run-03' or 'run-11' or 'run-10'?")
    assert unknown_run_message("x", "wh", []) == "unknown run id 'x' in warehouse wh; the warehouse is empty"
