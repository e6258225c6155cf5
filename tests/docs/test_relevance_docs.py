"""docs/relevance.md: every `-- doc-query:` block runs in plain DuckDB over the warehouse's Parquet files and
gives the numbers of the CSVs `laya-cases relevance export` wrote."""
from __future__ import annotations

import csv
import os
import random
import re

import duckdb
import pytest

from helpers import ROOT
from laya_cases.harness.relevance import metrics
from laya_cases.store.warehouse import Warehouse
from test_relevance import bench, scripted, write_language  # noqa: F401  (fixture)

DOC = (ROOT / "docs" / "relevance.md").read_text(encoding="utf-8")
QUERIES = dict(re.findall(r"```sql\n-- doc-query: (\w+)\n(.*?)```", DOC, re.S))


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def exported(tmp_path, scripted):  # noqa: F811
    rng = random.Random(3)
    for lang in ("en", "de", "zh"):
        items = [("yes" if rng.random() < 0.45 else "no", str(round(rng.random(), 2))) for _ in range(60)]
        items += [("yes", "0.5"), ("no", "0.5"), ("yes", "TRUNCATED"), ("no", "maybe")]
        write_language(tmp_path / "data", lang, items)
    wh = Warehouse(tmp_path / "warehouse")
    bench(wh, tmp_path / "data", "scripted-scorer", name="scorer")
    bench(wh, tmp_path / "data", "scripted-generator", name="generator")
    metrics.export(wh, [], str(tmp_path / "out"))
    return tmp_path


def _run(folder, name):
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        result = duckdb.connect().execute(QUERIES[name])
        columns = [d[0] for d in result.description]
        return [dict(zip(columns, row)) for row in result.fetchall()]
    finally:
        os.chdir(cwd)


def _same(query_rows, csv_rows):
    assert len(query_rows) == len(csv_rows) and query_rows
    for got, want in zip(query_rows, csv_rows):
        for key, value in got.items():
            text = want[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert float(text) == value, (key, got, want)
            else:
                assert text == ("" if value is None else str(value)), (key, got, want)


def test_the_doc_has_the_queries():
    assert set(QUERIES) == {"leaderboard", "threshold_sweep"}


@pytest.mark.slow
def test_leaderboard_query_re_derives_leaderboard_csv(exported):
    rows = _run(exported, "leaderboard")
    _same(rows, _csv(exported / "out" / "leaderboard.csv"))
    assert {r["unparsed"] for r in rows if r["model_id"] == "generator"} == {64}     # every reply unparsed


@pytest.mark.slow
def test_sweep_query_re_derives_threshold_sweep_and_best_points(exported):
    rows = _run(exported, "threshold_sweep")
    _same(rows, _csv(exported / "out" / "threshold_sweep.csv"))
    (summary,) = _csv(exported / "out" / "scoring_summary.csv")
    for metric, column in (("mcc", "matthews_corrcoef_macro"), ("f1", "f1_macro"), ("recall", "recall_macro"),
                           ("precision", "precision_macro"), ("balanced_accuracy", "balanced_accuracy_macro")):
        best = max(r[column] for r in rows)
        assert float(summary["best_%s" % metric]) == best
        assert float(summary["best_%s_threshold" % metric]) == min(r["threshold"] for r in rows if r[column] == best)
