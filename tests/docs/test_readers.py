"""docs/readers.md, run as written: every engine reads the warehouse alike and gets the report's numbers.

Three stores: run ids that engines would guess to be a number (`0123`) or a date (`2024-01-02`) mixed with
a plain one, ids that all look like dates, ids that all look like numbers (a directory of such ids makes an
engine's partition guess a DATE or an INTEGER column, which must not shadow the file's VARCHAR `run_id`). Each
holds a NaN and a missing confidence, a run in the older layout (slice sets beside run.parquet), a dead writer's
torn files under `_staging/` and an orphan `cases` partition (a writer killed between its commit renames).
Engines that are not installed (Spark, DataFusion) are skipped.
"""
from __future__ import annotations

import importlib
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from helpers import ROOT, end_spark
from laya_cases.query.sql import connect

DOC = ROOT / "docs" / "readers.md"
BLOCK = re.compile(r"```python\n# engine: (\w+)\n(.*?)```", re.S)
MODULES = {"duckdb": "duckdb", "polars": "polars", "pyarrow": "pyarrow.dataset", "pandas": "pandas",
           "spark": "pyspark", "datafusion": "datafusion"}
METRICS = ("choice_accuracy", "noul_accuracy", "mean_confidence")
MIXED = {"0123": [0.9, 0.6, None, 0.3], "2024-01-02": [0.5, float("nan"), 0.25], "demo": [0.1, 0.2, 0.3]}
DATES = {"2024-01-02": [0.9, 0.6, None, 0.3], "2024-02-03": [0.5, float("nan"), 0.25], "2025-12-31": [0.1, 0.2, 0.3]}
NUMBERS = {"0123": [0.9, 0.6, None, 0.3], "17": [0.5, float("nan"), 0.25], "42": [0.1, 0.2, 0.3]}
STORES = {"mixed": MIXED, "dates": DATES, "numbers": NUMBERS}


def blocks() -> Dict[str, str]:
    found = dict(BLOCK.findall(DOC.read_text(encoding="utf-8")))
    assert sorted(found) == sorted(MODULES), "docs/readers.md: one block per engine"
    return found


def _rows(confidences: List[Any]) -> List[Dict[str, Any]]:
    """One choice and one noul question per row; a None confidence is left out of the answer."""
    rows = []
    for i, conf in enumerate(confidences):
        choice: Dict[str, Any] = {"type": "choice", "choice": "a" if i % 3 else "b"}
        if conf is not None:
            choice["answer_confidence"] = conf
        rows.append({"state": "s%d" % i,
                     "questions": {"c": {"type": "choice", "instructions": "pick", "criteria": ["a", "b"]},
                                   "n": {"type": "noul", "instructions": "is it?"}},
                     "expected": {"c": "a", "n": i % 2 == 0},
                     "answers": {"c": choice, "n": {"type": "noul", "noul": 0.8 if i % 4 else 0.2, "confidence": 0.7}}})
    return rows


@pytest.fixture(scope="module", autouse=True)
def _spark_ends_with_the_module():
    """The documented Spark block starts a session (getOrCreate): its JVM ends with this file."""
    yield
    end_spark()


@pytest.fixture(scope="module", params=sorted(STORES))
def store(request, tmp_path_factory) -> Path:
    """The first id's run also leaves an orphan copy; the last id's run is in the older layout."""
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    ids = STORES[request.param]
    first, last = list(ids)[0], list(ids)[-1]
    base = tmp_path_factory.mktemp("readers-" + request.param)
    (base / "ids.json").write_text(json.dumps(ids))
    wh = Warehouse(base / "warehouse")
    for rid, confidences in ids.items():
        answers = base / ("%s.jsonl" % rid)
        answers.write_text("".join(json.dumps(r) + "\n" for r in _rows(confidences)), encoding="utf-8")
        ingest(wh, str(answers), run_id=rid)
    # the last run in the older layout: its slice sets beside run.parquet, no slice_sets/ partition
    shutil.move(str(wh.slice_set_partition(last) / "part-00000.parquet"), str(wh.run_entry(last) / "slice_sets.parquet"))
    wh.slice_set_partition(last).rmdir()
    # a writer killed between its commit renames: cases (and slice sets) without a runs entry
    for tree in ("cases", "slice_sets"):
        shutil.copytree(wh.root / tree / ("run_id=" + first), wh.root / tree / "run_id=orphan")
    # a dead writer's staging area: a torn file being written, and a torn *.parquet (as older writers left)
    torn = wh.staging_dir / "dead.999999.0badc0de" / "cases" / "run_id=dead"
    torn.mkdir(parents=True)
    head = (wh.case_partition(last) / "part-00000.parquet").read_bytes()[:300]
    for name in ("part-00000.parquet.tmp", "part-00000.parquet"):
        (torn / name).write_bytes(head)
    return base


@pytest.fixture(scope="module")
def expected(store) -> Dict[str, Dict[str, Any]]:
    from laya_cases.report import build as R
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(store / "warehouse")
    out = {}
    for rid in wh.run_ids():
        doc = R.build(connect(wh, [rid]), rid, R.Options(include_cases=False))
        out[rid] = {"n_cases": doc["extensions"]["run"]["n_cases"], **{m: doc["overall"].get(m) for m in METRICS}}
    ids = list(json.loads((store / "ids.json").read_text()))
    assert sorted(out) == sorted(ids)
    assert math.isnan(out[ids[1]]["mean_confidence"]) and out[ids[0]]["mean_confidence"] == pytest.approx(4.6 / 7)
    return out


def test_the_store_holds_the_debris_and_leftovers_names_it(store):
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(store / "warehouse")
    found = wh.leftovers()
    assert [Path(p).name for p in found["staging"]] == ["dead.999999.0badc0de"]
    assert [Path(p).relative_to(wh.root).as_posix() for p in found["orphans"]] == \
        ["cases/run_id=orphan", "slice_sets/run_id=orphan"]
    assert wh.leftovers_note() == ("1 staging area(s) and 2 orphan partition(s) left by writers that died in %s; "
                                   "`laya-cases gc` removes them" % wh.root)
    assert Warehouse(store / "elsewhere").leftovers_note() is None


def _as_rows(engine: str, per_run: Any) -> List[Dict[str, Any]]:
    if engine == "duckdb":
        return [dict(zip(per_run.columns, row)) for row in per_run.fetchall()]
    if engine == "polars":
        return per_run.to_dicts()
    if engine == "pyarrow":
        return per_run.to_pylist()
    if engine == "pandas":
        import pyarrow as pa

        return pa.Table.from_pandas(per_run, preserve_index=False).to_pylist()
    if engine == "spark":
        return [row.asDict() for row in per_run.collect()]
    return per_run.to_arrow_table().to_pylist()          # datafusion


def _same(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return math.isclose(got, want, rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize("engine", [pytest.param(e, marks=pytest.mark.slow) if e == "spark" else e   # a Spark JVM
                                    for e in sorted(MODULES)])
def test_each_engine_gets_the_reports_numbers(engine, store, expected, monkeypatch):
    try:
        module = importlib.import_module(MODULES[engine])
    except ImportError:
        pytest.skip("%s is not installed" % engine)
    if engine == "pandas" and int(module.__version__.split(".")[0]) < 3:
        pytest.skip("the documented pandas line needs pandas 3 (future.distinguish_nan_and_na)")
    monkeypatch.chdir(store)
    namespace: Dict[str, Any] = {}
    block = blocks()[engine]
    if engine == "spark":   # Spark resolves relative paths against the JVM's start directory, and an
        block = block.replace('"warehouse/', '"%s/warehouse/' % store)   # earlier test may have started it
    exec(compile(block, "docs/readers.md (%s)" % engine, "exec"), namespace)   # noqa: S102
    got = {row["run_id"]: row for row in _as_rows(engine, namespace["per_run"])}
    assert sorted(got) == sorted(expected), "committed runs only, ids as written"
    for rid, want in expected.items():
        assert got[rid]["n_cases"] == want["n_cases"], rid
        for metric in METRICS:
            assert _same(got[rid][metric], want[metric]), (engine, rid, metric, got[rid][metric], want[metric])


def test_runs_says_on_stderr_what_dead_writers_left(store):
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    result = CliRunner().invoke(app, ["runs", "-w", str(store / "warehouse"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == ["laya-cases: note: 1 staging area(s) and 2 orphan partition(s) left by "
                                          "writers that died in %s; `laya-cases gc` removes them"
                                          % (store / "warehouse").resolve()]
    assert "orphan" not in result.stdout


def test_a_nan_confidence_is_seen_by_a_plain_duckdb_query(tmp_path):
    """Case files carry no float min/max statistics: DuckDB would fold `conf <= 1` and `isnan(conf)` against
    statistics that leave NaN out (duckdb/duckdb#25521), and a NaN confidence would vanish from the answer."""
    import duckdb

    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    rows = [{"state": s, "questions": {"q": {"type": "noul"}}, "expected": {"q": True},
             "answers": {"q": {"type": "noul", "noul": 0.9, "answer_confidence": c}}}
            for s, c in (("a", 0.25), ("b", float("nan")), ("c", 1.0))]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ingest(Warehouse(tmp_path / "wh"), str(path), run_id="r")
    glob = (tmp_path / "wh" / "cases" / "run_id=*" / "*.parquet").as_posix()
    got = duckdb.sql("SELECT count(*) FILTER (WHERE confidence <= 1), count(*) FILTER (WHERE isnan(confidence)) "
                     "FROM read_parquet('%s')" % glob).fetchall()[0]
    assert got == (2, 1)
    assert duckdb.sql("SELECT count(*) FROM read_parquet('%s') WHERE isnan(confidence)" % glob).fetchall() == [(1,)]
