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

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed (pip install -e '.[spark]' from the clone)")
pytest.importorskip("sqlglot", reason="sqlglot not installed (pip install -e '.[spark]' from the clone)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("--engine spark needs Java 17+ (none on PATH or JAVA_HOME)", allow_module_level=True)

from helpers import ROOT, T62_RULES, end_spark, fixture_rows, record_to_row  # noqa: E402
from laya_cases.report import build as R  # noqa: E402
from laya_cases.query.engines import translate  # noqa: E402
from laya_cases.query.engines.spark import SparkConnection, session  # noqa: E402
from report_path import Store  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # noqa: E402
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow   # a Spark JVM (local[2])

MASTER = "local[2]"
EXTRAS = dict(score_within=(0.5, 0.0), coverages=(0.3, 1.0), thresholds=(0.6,))


#: The test session's settings (tiny tables, many short queries): few shuffle partitions, no adaptive
#: re-planning, no whole-stage code generation, the JVM's quick C1 compiler, no UI. The results are the
#: same bits with Spark's defaults (docs/scale.md); these only cut the JVM's warm-up and per-query cost.
TEST_CONF = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
             "spark.sql.adaptive.enabled": "false", "spark.sql.codegen.wholeStage": "false",
             "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
             "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}


@pytest.fixture(scope="module", autouse=True)
def spark():
    """One Spark session for every test here: the CLI's `--spark-master local[2]` finds it (getOrCreate).
    Its JVM ends with the module, before the worker runs another file."""
    yield session(MASTER, TEST_CONF)
    end_spark()


def both(spark, wh, run_id, **options):
    """(DuckDB's report JSON, Spark's) of one run, without the cases listing unless asked."""
    options.setdefault("include_cases", False)
    duck = R.dumps(R.build(connect(wh, [run_id]), run_id, R.Options(**options)))
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


@pytest.mark.parametrize("n, distinct", [(1_000_000, False), (50_000, True)])
def test_a_synthetic_run_reports_the_same_on_spark(spark, tmp_path, n, distinct):
    """The acceptance run: 1M decisions, confidences rounded to 4 decimals; and 50k decisions with every
    confidence distinct (50k distinct levels overall, past the curve's 1,000-point bound, and in every
    slice). 200k distinct took 50 s of the suite; 1M distinct takes Spark 90-150 s on local[2]
    here: `bench/engine_bench.py --n 1000000 --distinct` checks that size by hand (docs/scale.md)."""
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(tmp_path / "wh")
    synthetic.write_run(wh, "syn", synthetic.decisions(n, seed=3, distinct=distinct))
    assert_same(*both(spark, wh, "syn", **EXTRAS))


def test_the_cli_json_is_the_same_file(tmp_path):
    """`report RUN --engine spark --json F` writes DuckDB's bytes (the cases listing is streamed from the
    store either way); in this process, so the test session serves it."""
    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("ties.json"))
    same_cli(tmp_path / "cli", "report", run_id, "-w", store.wh.root, "--json", "{out}/r.json",
             "--min", "choice_accuracy=0.1", code=0)


def test_mcnemar_p_is_the_same_bits_on_spark(spark):
    """sql/_spark/macros/mcnemar_exact.sql against DuckDB's macro: exact binomial counts (n <= 33, both
    sides of 20, where Spark's factorial stops) and the lgamma terms above, on one grid in one query."""
    import duckdb

    from laya_cases.query import sql as sqlfiles
    from laya_cases.query.engines.spark import SparkSQL

    grid = [(b, c) for b in (0, 1, 4, 16, 17, 20, 33, 34, 50, 120, 1000) for c in (0, 3, 16, 17, 30, 40, 999)]
    query = ("SELECT b, c, lc_mcnemar_p(b, c) AS p FROM (SELECT CAST(b AS BIGINT) AS b, CAST(c AS BIGINT) AS c "
             "FROM (VALUES %s) t(b, c)) ORDER BY b, c" % ", ".join("(%d, %d)" % g for g in grid))
    duck = duckdb.connect()
    sqlfiles.prepare_connection(duck)
    expected = duck.execute(query).fetchall()
    assert len(expected) == len(grid) and expected[0][2] == 1.0 and 0 < min(r[2] for r in expected) < 1e-200
    assert SparkSQL(spark).execute(query).fetchall() == expected


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
    from laya_cases.core.errors import UsageError

    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("ties.json"))
    con = SparkConnection(spark, store.wh, [run_id])
    with pytest.raises(UsageError, match=r"^spark: \[TABLE_OR_VIEW_NOT_FOUND\]"):
        con.execute("SELECT * FROM no_such_table")


# ------------------------------------------------------------------ diff, compare and gates on Spark
def same_cli(tmp_path, *args, code: int):
    """Run one command on both engines in this process (one Spark session): exit code, stdout, stderr and
    every file it writes (`{out}` in an argument: a path per engine) must be the same bytes."""
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    seen = {}
    for engine in ("duckdb", "spark"):
        folder = tmp_path / engine
        folder.mkdir(parents=True, exist_ok=True)
        argv = [str(a).replace("{out}", str(folder)) for a in args] + ["--engine", engine, "--spark-master", MASTER]
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == code, (engine, result.stdout, result.stderr, result.exception)
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        seen[engine] = (result.stdout, result.stderr, files)
    assert seen["spark"] == seen["duckdb"]
    return seen["duckdb"]


FLIPS = {("intent", 1), ("intent", 2), ("intent", 5), ("spam", 3), ("spam", 7), ("intent", 11), ("spam", 14)}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two stores: test_diff's (runs a and b differ in the 7 FLIPS cases; `moved` drops a row, adds one and
    relabels one) and the bundled support run with its flipped-answers twin (helpers.flipped_support_answers)."""
    from flip_data import rows as flip_rows, write as write_rows
    from helpers import flipped_support_answers
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    base = tmp_path_factory.mktemp("pairs")
    flips, support = Warehouse(base / "flips"), Warehouse(base / "support")
    dataset = write_rows(base / "ds.jsonl", flip_rows(40), answers=False)
    for run_id, rows in (("a", flip_rows(40)), ("b", flip_rows(40, flips=FLIPS)),
                         ("moved", flip_rows(40, drop={4}, extra=1, relabel={8}))):
        answers = write_rows(base / ("%s.jsonl" % run_id), rows)
        ingest(flips, str(answers), run_id=run_id, dataset_path=None if run_id == "moved" else str(dataset))
    data = ROOT / "data"
    ingest(support, str(data / "support.answers.jsonl"), run_id="support", dataset_path=str(data / "support.jsonl"))
    ingest(support, str(flipped_support_answers(base / "other.answers.jsonl")), run_id="other",
           dataset_path=str(data / "support.jsonl"))
    return {"base": base, "flips": flips.root, "support": support.root}


def test_diff_is_the_same_on_spark(stores, tmp_path):
    """Flips, McNemar, the paired bootstrap, slices, label drift and the flip-rate gate: text, JSON and
    Markdown bytes and the exit code, on test_diff's pair, its moved run and the flipped support pair."""
    out, _, files = same_cli(tmp_path / "ab", "diff", "a", "b", "-w", stores["flips"], "--by", "language",
                             "--json", "{out}/d.json", "--markdown", "{out}/d.md", "--max-flip-rate", "0.05", code=1)
    doc = json.loads(files["d.json"])
    assert (doc["right_to_wrong"], doc["wrong_to_right"], len(doc["flips"])) == (4, 3, 7) and doc["ci95"]
    assert doc["gate"]["failures"] and "4 right->wrong, 3 wrong->right over 80 paired cases" in out
    _, _, files = same_cli(tmp_path / "moved", "diff", "a", "moved", "-w", stores["flips"], "--by", "tag",
                           "--bootstrap", "100", "--seed", "3", "--json", "{out}/d.json", code=0)
    doc = json.loads(files["d.json"])
    assert (doc["only_in_a"], doc["only_in_b"], doc["label_changed"]) == (2, 2, 1)
    _, _, files = same_cli(tmp_path / "support", "diff", "support", "other", "-w", stores["support"], "--by", "qid",
                           "--json", "{out}/d.json", code=0)
    assert json.loads(files["d.json"])["flips"]


def test_t6_2_policy_thresholds_and_baseline_gate_the_same_on_spark(tmp_path):
    """T6.2 (test_gates' policy on ties, its baseline and tolerance) plus --min/--max thresholds, one
    absent metric among them: the FAIL lines, delta lines, exit 1 and the report JSON are DuckDB's."""
    store = Store(tmp_path)
    run_id = store.ingest(fixture_rows("ties.json"))
    baseline = R.build(connect(store.wh, [run_id]), run_id, R.Options())
    baseline["overall"]["choice_accuracy"] = 0.7
    baseline["slices"]["language"]["en"]["choice_accuracy"] = 0.75
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    (tmp_path / "policy.json").write_text(json.dumps({"version": 1, "rules": T62_RULES}))
    _, err, files = same_cli(tmp_path / "t62", "report", run_id, "-w", store.wh.root,
                             "--baseline", tmp_path / "base.json",
                             "--tolerance", "choice_accuracy=0.05", "--gate-policy", tmp_path / "policy.json",
                             "--min", "choice_accuracy=0.9", "--max", "ece=0.01", "--min", "no_such_metric=1",
                             "--json", "{out}/r.json", code=1)
    fails = [line for line in err.splitlines() if line.startswith("FAIL: ")]
    assert "FAIL: slice gate rule 2 (language=en, choice_accuracy): candidate count 4 is below min_count 5" in fails
    assert len(fails) == 9 and json.loads(files["r.json"])["extensions"]["gate"]["policy"]


def test_a_policy_s_insufficient_evidence_intervals_are_the_same_on_spark(tmp_path):
    """on_insufficient rules: the paired bootstrap counted per class of cases (sql/gates/policy_case_classes.sql,
    query/paired_bootstrap.py) gives Spark DuckDB's intervals, FAIL lines and exit code."""
    from policy_data import documents, policy

    candidate, baseline, _, _ = documents(7, 8)
    rules = policy(8, on_insufficient="fail")
    for rule in rules["rules"]:
        rule["max_drop"] = 0.1
    for name, doc in (("c", candidate), ("b", baseline), ("p", rules)):
        (tmp_path / ("%s.json" % name)).write_text(json.dumps(doc))
    _, err, _ = same_cli(tmp_path / "out", "compare", tmp_path / "c.json", "--baseline", tmp_path / "b.json",
                         "--gate-policy", tmp_path / "p.json", "-w", tmp_path / "wh", code=1)
    assert "insufficient evidence: the 95% interval [-0.8571, +0.2000]" in err


@pytest.mark.parametrize("base_value, value, tol, verdict", [
    (0.80, 0.79, 0.01, 1), (0.51, 0.50, 0.01, 1), (0.55, 0.50, 0.05, 1), (0.45, 0.50, 0.05, 0),
    (0.7, 0.6666666666666666, 0.05, 0)])
def test_t6_1_float_boundaries_are_the_same_on_spark(tmp_path, base_value, value, tol, verdict):
    config = {"coverage_metric_definition": 2}
    for name, v in (("c", value), ("b", base_value)):
        (tmp_path / ("%s.json" % name)).write_text(json.dumps({"config": config, "overall": {"choice_accuracy": v}}))
    out, _, _ = same_cli(tmp_path, "compare", tmp_path / "c.json", "--baseline", tmp_path / "b.json", "--tolerance",
                         "choice_accuracy=%r" % tol, "-w", tmp_path / "wh", code=verdict)
    assert out.startswith("choice_accuracy    baseline=%.4f value=%.4f" % (base_value, value))


def test_compare_of_a_run_on_spark_is_the_same(stores, tmp_path):
    """`compare other --baseline support.json --gate-policy` (the candidate's report built on each engine,
    a relative rule over the flipped support pair)."""
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(stores["support"])
    (tmp_path / "support.json").write_text(json.dumps(R.build(connect(wh, ["support"]), "support", R.Options())))
    rules = [{"slice": {"qid": "intent"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.01},
             {"slice": {"qid": "intent"}, "metric": "ece", "min_count": 1, "max": 0.5}]
    (tmp_path / "policy.json").write_text(json.dumps({"version": 1, "rules": rules}))
    out, err, _ = same_cli(tmp_path / "cmp", "compare", "other", "--baseline", tmp_path / "support.json",
                           "--gate-policy", tmp_path / "policy.json", "-w", stores["support"], code=1)
    assert "choice_accuracy" in out and "FAIL: slice gate rule 1" in err
