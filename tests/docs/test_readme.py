"""The README's plain-DuckDB query runs as written (its tour and Python section: tests/docs/test_docs_console.py)."""
from __future__ import annotations

import re

import pytest

from helpers import ROOT
from laya_cases.query.sql import connect

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split("\n## %s\n" % title, 1)[1].split("\n## ", 1)[0]


def test_the_duckdb_query_gives_the_reports_slices(tmp_path, monkeypatch):
    import duckdb

    from laya_cases.report import build as R
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(tmp_path / "warehouse")
    ingest(wh, str(ROOT / "data" / "support.answers.jsonl"), run_id="minilm",
           dataset_path=str(ROOT / "data" / "support.jsonl"))
    sql = re.findall(r"```sql\n(.*?)```", _section("The warehouse, from plain DuckDB"), re.S)[0]
    monkeypatch.chdir(tmp_path)
    con = duckdb.connect()
    create, query = [s for s in sql.split(";") if s.strip()]
    con.execute(create)
    got = {lang: (acc, n) for lang, acc, n in con.execute(query).fetchall()}
    doc = R.build(connect(wh, ["minilm"]), "minilm", R.Options(include_cases=False))
    want = doc["slices"]["language"]
    assert sorted(got) == sorted(want)
    for lang, (acc, n) in got.items():
        assert acc == pytest.approx(want[lang]["choice_accuracy"], abs=1e-15)
        assert n == doc["extensions"]["slices"]["language"][lang]["choice_accuracy"]["n"]
