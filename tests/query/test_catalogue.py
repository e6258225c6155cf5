"""The metric catalogue (issue 7 item 1): a new metric is one SQL file, no Python edit.

A throwaway metric file with a header, dropped into a copy of the installed sql package, shows
up in the report's overall and slices, its counts in extensions, the gates (a --min limit, McNemar
gateability as a per-case metric, a bootstrap interval) and the terminal table; removed, it is gone.
Also: the derived lists equal what the report published before the catalogue, and the build order.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from importlib import resources
from pathlib import Path

import pytest

from helpers import ROOT
from laya_cases.query import catalogue
from laya_cases.gates import runner as G
from laya_cases.report import build as R
from laya_cases_cli import console as V
from report_path import Store

NAME = "zz_throwaway_confident"
THROWAWAY = """-- metric: %s -- share of paired cases with confidence >= 0.5 (a test's throwaway metric)
-- spec: S3.9 (paired cases), S9.2 (n and hits beside the ratio)
-- grain: one row per (dim, key) group with paired cases
-- input: slice_cells
-- params: none
-- kind: evaluator
-- per_case: yes
-- interval: yes
-- family: calibration 9
-- output: dim, key, metric, value, n, hits
SELECT dim, key, '%s' AS metric,
       CAST(sum(CASE WHEN conf >= 0.5 THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS value,
       sum(n) AS n,
       sum(CASE WHEN conf >= 0.5 THEN n ELSE 0 END) AS hits
FROM slice_cells
WHERE conf IS NOT NULL AND correct IS NOT NULL
GROUP BY dim, key
""" % (NAME, NAME)


def _rows():
    path = ROOT / "tests" / "golden" / "inputs" / "support.answers.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """A copy of the installed sql package with the throwaway file added, imported in its place for this
    test only: writing into the installed package would show the metric to tests running beside it."""
    installed = Path(str(resources.files("laya_cases_sql")))
    copy = tmp_path / "sqlpkg" / "laya_cases_sql"
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "metrics" / (NAME + ".sql")
    path.write_text(THROWAWAY, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("laya_cases_sql", copy / "__init__.py",
                                                  submodule_search_locations=[str(copy)])
    package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    monkeypatch.setitem(sys.modules, "laya_cases_sql", package)
    catalogue.clear()
    try:
        yield path
    finally:
        monkeypatch.undo()
        catalogue.clear()


def test_derived_lists_are_the_published_ones():
    evaluators = [m.names[0] for m in catalogue.of_kind("evaluator")]
    assert evaluators == ["choice_accuracy", "mean_confidence", "noul_accuracy", "score_mae", "score_within_<tolerance>"]
    assert [m.names[0] for m in catalogue.of_kind("paired")] == ["aurc", "brier", "ece", "selective_accuracy@<coverage%>"]
    assert [n for n, _, _ in R.ratio_metrics(R.Options(score_within=[0.5]))] == [
        "choice_accuracy", "noul_accuracy", "score_within_0.5", "selective_accuracy@50", "selective_accuracy@80"]
    assert catalogue.per_case_names() == ["choice_accuracy", "noul_accuracy", "score_within_*"]
    assert set(G.order_dependent()) == {"ece", "brier", "aurc"}
    assert [catalogue.is_coverage_metric(m) for m in ("aurc", "selective_accuracy@50", "ece")] == [True, True, False]
    assert [R.is_paired(m) for m in ("ece", "selective_accuracy@80", "choice_accuracy", "score_within_1")] == [
        True, True, False, False]
    assert dict(catalogue.families())["timing"][0] == "latency_p50_ms"


def test_build_order_follows_the_input_lines():
    names = [f.name for f in catalogue.build_order(["levels", "slice_errors", "reliability"], ("pipeline", "metrics"))]
    for before, after in (("cells", "level_cells"), ("slice_map", "level_groups"), ("level_groups", "level_cells"),
                          ("level_cells", "level_starts"), ("level_starts", "levels"),
                          ("error_cells", "slice_errors"), ("cells", "slice_sums"), ("slice_map", "slice_sums"),
                          ("slice_sums", "reliability")):
        assert names.index(before) < names.index(after)
    # the levels come from the cells in one aggregation, and the order-free metrics add partial sums per
    # slice set: neither builds the per-confidence slice_cells (only a metric file that reads it does)
    assert "slice_cells" not in names
    assert "slice_cells" not in [f.name for f in catalogue.build_order(["reliability"], ("pipeline", "metrics"))]
    boot = catalogue.build_order(["slice_cells", "slice_errors", "levels", "slice_sums"], ("bootstrap", "pipeline"))
    assert [f.path for f in boot if f.name in ("slice_cells", "level_cells", "level_groups")] == [
        "bootstrap/level_groups.sql", "bootstrap/level_cells.sql", "bootstrap/slice_cells.sql"]
    assert [f.path for f in boot if f.name in ("row_sums", "slice_sums")] == ["bootstrap/row_sums.sql",
                                                                              "bootstrap/slice_sums.sql"]


def test_a_new_metric_is_one_sql_file(throwaway, tmp_path):
    store = Store(tmp_path)
    run = store.ingest(_rows())
    doc = store.build(run)
    value = doc["overall"][NAME]
    assert 0.0 <= value <= 1.0
    assert all(NAME in group for group in doc["slices"]["language"].values())
    counts = doc["extensions"]["overall"][NAME]
    assert counts["n"] > 0 and value == counts["hits"] / counts["n"]
    # gates: a --min limit on it, and McNemar gateability (a per-case 0/1 metric)
    gate = G.prepare(G.GateRequest(mins=["%s=1.01" % NAME]))
    assert any(line.startswith("%s=" % NAME) for line in gate.judge(doc).failures)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"version": 1, "rules": [{"slice": {"language": "en"}, "metric": NAME,
                                                           "min_count": 1, "max_drop": 0.1, "significant_at": 0.05}]}))
    assert G.load_policy(str(policy))["rules"][0]["metric"] == NAME
    assert NAME in [n for n, _, _ in R.ratio_metrics(R.Options())]
    # the terminal table lists it in its family
    text = V.render(V.report_view(doc, ["language"]), 200)
    assert NAME in text


def test_without_the_file_it_is_gone(tmp_path):
    assert catalogue.find(NAME) is None
    with pytest.raises(Exception, match="per-case 0/1 metric"):
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"version": 1, "rules": [{"slice": {"language": "en"}, "metric": NAME,
                                                               "min_count": 1, "max_drop": 0.1,
                                                               "significant_at": 0.05}]}))
        G.load_policy(str(policy))

