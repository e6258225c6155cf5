"""Each dataset row's input, kept once per labelled-rows digest (store/inputs.py, issue 32 item 1): two runs
of one dataset share one file, whose lines hash to the runs' labelled_rows_sha256 (checked here with
hashlib, not with the library's digest); `run`, `ingest` and `import` fill it; the serve case page, the
`inputs` view and `sql` show it; a run that predates it still serves and reports and says so; a write
that dies before its commit leaves no inputs file."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from doubles import ExplodingRunnerDouble
from helpers import ROOT, snapshot_tree
from test_bad_input import run_cli
from laya_cases.core.errors import UsageError
from laya_cases.record.ingest.answers import ingest
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.store.warehouse import Warehouse
from laya_cases.views.serve import create_app

pytestmark = pytest.mark.slow          # a few commits and an app per test

DATA = ROOT / "data"
LMEVAL = ROOT / "tests" / "fixtures" / "imports" / "lmeval" / "gpt2-random-seed1"


def _rows(wh: Path, sql: str):
    code, out, err = run_cli("sql", sql, "--format", "json", "-w", wh)
    assert code == 0, err
    return json.loads(out)


def _digest_of(path: Path) -> str:
    """sha256 over the file's lines as docs/identity.md defines the labelled-rows digest."""
    import pyarrow.parquet as pq

    table = pq.read_table(str(path)).sort_by("row_index")
    lines = table.column("row_json").to_pylist()
    assert table.column("row_index").to_pylist() == list(range(len(lines)))
    return hashlib.sha256(b"laya-cases-labelled-rows/1\n" + "".join(l + "\n" for l in lines).encode()).hexdigest()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Runs of data/support.jsonl: `run` of the runner double (BOOM rows fail) and an `ingest` of its
    recorded answers; and an lm-eval import."""
    root = tmp_path_factory.mktemp("inputs") / "wh"
    wh = Warehouse(root)
    execute(wh, RunOptions(str(DATA / "support.jsonl"), run_id="ran", on_error="skip"), runner=ExplodingRunnerDouble())
    ingest(wh, str(DATA / "support.answers.jsonl"), run_id="ingested")
    code, _, err = run_cli("import", LMEVAL, "--run-id", "imported", "-w", root)
    assert code == 0, err
    return root


def test_two_runs_of_one_dataset_share_one_file_whose_lines_are_the_digest(store):
    files = sorted((store / "inputs").glob("*.parquet"))
    digests = {r["run_id"]: r["labelled_rows_sha256"] for r in _rows(store, "SELECT run_id, labelled_rows_sha256 FROM runs")}
    assert digests["ran"] == digests["ingested"]
    assert sorted(f.stem for f in files) == sorted(set(digests.values()))       # one file per digest
    for f in files:
        assert _digest_of(f) == f.stem


def test_the_inputs_view_joins_every_case_to_its_row(store):
    rows = _rows(store, "SELECT c.run_id, c.row_index, json_extract_string(i.row_json, '$.state') AS state "
                        "FROM cases c JOIN runs r USING (run_id) LEFT JOIN inputs i "
                        "ON i.labelled_rows_sha256 = r.labelled_rows_sha256 AND i.row_index = c.row_index")
    assert rows and all(r["state"] is not None for r in rows)
    states = [json.loads(line)["state"] for line in (DATA / "support.jsonl").read_text().splitlines() if line.strip()]
    for r in rows:
        if r["run_id"] in ("ran", "ingested"):
            assert r["state"] == states[r["row_index"]]


def test_the_case_page_shows_the_input_of_a_run_an_ingest_and_an_import(store):
    client = TestClient(create_app(store))
    first = json.loads((DATA / "support.jsonl").read_text().splitlines()[0])
    for run in ("ran", "ingested"):
        page = client.get("/run/%s/case?row=0&qid=intent" % run)
        assert page.status_code == 200
        assert first["state"] in page.text and "Not stored" not in page.text
        assert "What does the customer want?" in page.text.split('id="question"')[1]
    qid, row = _rows(store, "SELECT qid, min(row_index) AS r FROM cases WHERE run_id = 'imported' GROUP BY 1 "
                            "ORDER BY 1 LIMIT 1")[0].values()
    page = client.get("/run/imported/case", params={"row": row, "qid": qid})
    assert page.status_code == 200 and 'id="state"' in page.text and "Not stored" not in page.text


def test_a_run_committed_before_the_inputs_still_serves_and_reports(store, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(store, old)
    shutil.rmtree(old / "inputs")
    page = TestClient(create_app(old)).get("/run/ran/case?row=0&qid=intent")
    assert page.status_code == 200 and "Not stored in this run" in page.text
    code, out, err = run_cli("report", "ran", "-w", old)
    assert code == 0 and out == run_cli("report", "ran", "-w", store)[1]
    assert _rows(old, "SELECT count(*) AS n FROM inputs") == [{"n": 0}]


def test_a_write_that_dies_before_its_commit_leaves_no_inputs(tmp_path):
    root = tmp_path / "wh"
    bad = tmp_path / "bad.jsonl"
    lines = (DATA / "support.answers.jsonl").read_text().splitlines()
    bad.write_text("\n".join(lines[:5] + ['{"state": "x", "questions": 3}']) + "\n")
    with pytest.raises(UsageError):
        ingest(Warehouse(root), str(bad), run_id="dies")
    assert not (root / "inputs").exists() or not list((root / "inputs").iterdir())
    before = snapshot_tree(root)
    ingest(Warehouse(root), str(DATA / "support.answers.jsonl"), run_id="lives")
    assert len(list((root / "inputs").iterdir())) == 1 and snapshot_tree(root) != before
