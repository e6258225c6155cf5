"""Runs written with an older decision schema stay readable beside new ones (schema.SCHEMA_VERSION)."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import ROOT
from laya_cases.report import build as R
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

ANSWERS = ROOT / "tests" / "golden" / "inputs" / "support.answers.jsonl"


def _as_version_1(wh: Warehouse, run_id: str) -> None:
    """Rewrite a run's case files as /1 wrote them: two stored evaluator columns more."""
    for path in wh.case_files(run_id):
        table = pq.read_table(path)
        for kind in ("choice", "noul"):
            value = [None if t != kind or c is None else float(c)
                     for t, c in zip(table["answer_type"].to_pylist(), table["correct"].to_pylist())]
            table = table.append_column("%s_accuracy" % kind, pa.array(value, pa.float64()))
        pq.write_table(table, path)


@pytest.mark.slow
def test_a_version_1_run_reports_the_same_next_to_a_version_2_run(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(ANSWERS), run_id="old")
    ingest(wh, str(ANSWERS), run_id="new")
    _as_version_1(wh, "old")
    con = connect(wh)
    assert con.execute("SELECT count(*) FROM cases").fetchone()[0] == 96
    docs = {rid: R.build(connect(wh, [rid]), rid, R.Options()) for rid in ("old", "new")}
    for doc in docs.values():
        doc["extensions"]["run"].pop("run_id")
    assert json.dumps(docs["old"], sort_keys=True) == json.dumps(docs["new"], sort_keys=True)


def test_columns_a_newer_schema_added_read_as_typed_nulls_in_an_older_run(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(ANSWERS), run_id="old")
    for path in wh.case_files("old"):                    # as /2 wrote it: no benchmark columns
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["item_id", "logits", "truncated"]), path)
    con = connect(wh, ["old"])
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE cases)").fetchall())
    assert (types["item_id"], types["logits"], types["truncated"]) == ("VARCHAR", "DOUBLE[]", "BOOLEAN")
    assert con.execute("SELECT count(*), count(item_id), count(logits) FROM cases").fetchone() == (48, 0, 0)
