"""The metric library on Apache Spark equals DuckDB's, key for key and bit for bit (docs/scale.md).

Each test builds one report twice over the same store, with DuckDB and with Spark on local[2],
and compares the JSON text (`json.dumps` writes each float's shortest round-trip repr, so equal text
is equal bits; -0.0 and NaN included). Skipped, in one line, without pyspark or Java.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed (pip install 'laya-cases[spark]')")
pytest.importorskip("sqlglot", reason="sqlglot not installed (pip install 'laya-cases[spark]')")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("--engine spark needs Java 17+ (none on PATH or JAVA_HOME)", allow_module_level=True)

from helpers import ROOT, cli, fixture_rows, record_to_row  # noqa: E402
from laya_cases import report as R  # noqa: E402
from laya_cases.engines import translate  # noqa: E402
from laya_cases.engines.spark import SparkConnection, session  # noqa: E402
from report_path import Store  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # noqa: E402

MASTER = "local[2]"
EXTRAS = dict(score_within=(0.5, 0.0), coverages=(0.3, 1.0), thresholds=(0.6,))


@pytest.fixture(scope="module")
def spark():
    return session(MASTER)


def both(spark, wh, run_id, **options):
    """(DuckDB's report JSON, Spark's) of one run, without the cases listing unless asked."""
    options.setdefault("include_cases", False)
    duck = R.dumps(R.build(wh.connect([run_id]), run_id, R.Options(**options)))
    other = R.dumps(R.build(SparkConnection(spark, wh, [run_id]), run_id, R.Options(**options)))
    return duck, other


def assert_same(duck: str, other: str) -> None:
    if duck != other:
        a, b = json.loads(duck), json.loads(other)
        diffs = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        pytest.fail("Spark's report differs from DuckDB's in %s:\n%s\n%s" % (diffs, duck[:3000], other[:3000]))


@pytest.mark.parametrize("name", ["ties.json", "edge1.json", "edge4.json"])
def test_every_spec_example_reports_the_same_on_spark(spark, tmp_path, name):
    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows(name))
    assert_same(*both(spark, store.wh, run_id, **EXTRAS))


def test_the_case_listing_and_bootstrap_intervals_are_the_same(spark, tmp_path):
    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("edge1.json"))
    duck, other = both(spark, store.wh, run_id, include_cases=True, bootstrap=100, seed=7, score_within=(0.5,))
    assert '"ci"' in duck and json.loads(duck)["cases"]
    assert_same(duck, other)


def test_exact_sums_of_extreme_values_are_the_same(spark, tmp_path):
    """Limbs above 2^53 (|x| >= 2^93), sums that overflow binary64, infinities, NaN, -0.0, subnormals."""
    groups = {"huge": [1e308, 1e308, 0.5], "wide": [1.2345e30, -3.3e29, 0.1, 7e27], "inf": [math.inf, 0.2],
              "both": [math.inf, -math.inf], "nan": [math.nan, 0.3], "tiny": [-0.0, 0.0, 5e-324, 1e-300],
              "plain": [0.1, 0.2, 0.3, 0.7, 0.7]}
    rows = [record_to_row(i, {"qid": "q", "qtype": "choice", "gold": "a", "pred": "a" if i % 2 else "b",
                              "answer_confidence": c, "language": lang})
            for i, (lang, c) in enumerate((lang, c) for lang, values in groups.items() for c in values)]
    store = Store(tmp_path)
    run_id = store.ingest(rows)
    duck, other = both(spark, store.wh, run_id)
    assert json.loads(duck)["slices"]["language"]["huge"]["mean_confidence"] != 0
    assert_same(duck, other)


@pytest.mark.parametrize("distinct", [False, True])
def test_a_synthetic_run_reports_the_same_on_spark(spark, tmp_path, distinct):
    """100k decisions here (CI time); docs/scale.md gives the 1M run measured by hand."""
    from laya_cases.warehouse import Warehouse

    wh = Warehouse(tmp_path / "wh")
    synthetic.write_run(wh, "syn", synthetic.decisions(100_000 if not distinct else 20_000, seed=3, distinct=distinct))
    assert_same(*both(spark, wh, "syn", **EXTRAS))


def test_the_cli_json_is_the_same_file(tmp_path):
    """`report RUN --engine spark --json F` writes DuckDB's bytes (the cases listing is streamed from the
    store either way)."""
    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("ties.json"))
    env = {**os.environ, "LAYA_CASES_WAREHOUSE": str(store.wh.root)}
    for engine in ("duckdb", "spark"):
        proc = cli("report", run_id, "--engine", engine, "--spark-master", MASTER, "--json",
                   str(tmp_path / ("%s.json" % engine)), "--min", "choice_accuracy=0.1", env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "spark.json").read_bytes() == (tmp_path / "duckdb.json").read_bytes()


def test_an_override_sits_at_the_same_path_and_everything_else_translates():
    assert translate.override("spark", "macros/exact_sum.sql") == "_spark/macros/exact_sum.sql"
    assert translate.override("spark", "metrics/ece.sql") == "metrics/ece.sql"
    text = translate.render("spark", translate.file_tree("spark", "metrics/brier.sql"), {})
    assert "lc_exact_mean_w" not in text.lower() and "LC_EXACT_TOTAL" in text and "DECIMAL(38, 0)" in text


def test_parameters_are_bound_as_literals_not_text():
    tree = translate.tree("spark", "SELECT * FROM runs WHERE run_id = $run_id AND x = $x")
    out = translate.render("spark", tree, {"run_id": "a' OR '1'='1", "x": 0.1})
    assert "'a\\' OR \\'1\\'=\\'1'" in out and "CAST('0.1' AS DOUBLE)" in out
    with pytest.raises(ValueError):
        translate.render("spark", tree, {"run_id": "a"})


def test_a_spark_failure_is_one_line(spark, tmp_path):
    from laya_cases import UsageError

    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("ties.json"))
    con = SparkConnection(spark, store.wh, [run_id])
    with pytest.raises(UsageError, match=r"^spark: \[TABLE_OR_VIEW_NOT_FOUND\]"):
        con.execute("SELECT * FROM no_such_table")
