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


@pytest.mark.slow
def test_a_delta_cases_table_made_before_source_item_id_takes_new_runs(tmp_path):
    """A Delta store's cases table created without a later optional column gains it at the next append
    (schema merge), and its earlier rows read it as null."""
    pytest.importorskip("deltalake")
    import deltalake as dl
    from laya_cases.store.delta.tables import PARTITION_BY, table_schema
    from test_bad_input import run_cli

    old = table_schema("cases")
    old = old.remove(old.get_field_index("source_item_id"))
    dl.DeltaTable.create(str(tmp_path / "d" / "cases"), old, partition_by=PARTITION_BY)
    rows = ROOT / "data" / "support.answers.jsonl"
    with_ids = tmp_path / "ids.jsonl"
    with_ids.write_text("".join(json.dumps(dict(json.loads(line), source_item_id="s%d" % i)) + "\n"
                                for i, line in enumerate(rows.read_text().splitlines())))
    url = "delta+file://%s" % (tmp_path / "d")
    for run, path in (("a", rows), ("b", with_ids)):
        code, _, err = run_cli("ingest", path, "-w", url, "--run-id", run)
        assert code == 0, err
    code, out, err = run_cli("sql", "SELECT run_id, count(source_item_id) AS n, count(*) AS m FROM cases "
                             "GROUP BY 1 ORDER BY 1", "--format", "csv", "-w", url)
    assert code == 0 and out.split() == ["run_id,n,m", "a,0,48", "b,48,48"], (out, err)
