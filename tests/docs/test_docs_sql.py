"""docs/sql.md and docs/identity.md, run as written (issue: foundation).

The SQL blocks of docs/sql.md are extracted and run in order with plain `duckdb.connect()` (no
laya-cases code on the connection) over a warehouse made by `laya-cases ingest`. A block whose first
line is `-- check: overall` must return one row whose columns are report metric names; `-- check:
slices.<dim>` returns one row per group, the key first. Each value must equal `laya-cases report
--json` within 1e-12 (S3.3: the report sums exactly, plain avg/sum may differ in the last bits); a
NULL means the report has no such key (S0.5). The doc cannot drift from the test: the test is the doc.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Dict, List, Tuple

import duckdb
import pytest

from helpers import ROOT, SPEC_FIXTURES, fixture_rows, record_to_row, write_jsonl
from inprocess import cli

DOCS = ROOT / "docs"
REQUIRED = {"choice_accuracy", "noul_accuracy", "score_mae", "mean_confidence", "ece", "brier", "aurc",
            "selective_accuracy@50", "selective_accuracy@80",
            "latency_p50_ms", "latency_p95_ms", "cost_per_decision_p50_ms", "cost_per_decision_p95_ms"}
TOL = 1e-12


def blocks(doc: Path, lang: str) -> List[str]:
    return re.findall(r"^```%s\n(.*?)^```" % lang, doc.read_text(encoding="utf-8"), re.M | re.S)


def _synthetic_rows(n: int = 400, seed: int = 7) -> List[dict]:
    """Seeded cases with heavy confidence ties, values outside [0, 1], NaN, all three types, slices, latencies."""
    import random

    rnd = random.Random(seed)
    levels = [0.0, 0.2, 1 / 3, 0.5, 0.7333333333333334, 0.8, 0.9, 1.0, 1.2, -0.1, float("nan")]
    rows = []
    for i in range(n):
        qtype = rnd.choice(["choice", "noul", "score"])
        rec = {"qid": {"choice": "intent", "noul": "spam", "score": "urgency"}[qtype], "qtype": qtype,
               "answer_confidence": rnd.choice(levels) if rnd.random() < 0.8 else round(rnd.random(), 3),
               "language": rnd.choice(["en", "de", "fr"]), "tags": rnd.sample(["vip", "hard", "new"], rnd.randint(0, 2))}
        if qtype == "choice":
            rec.update(gold=rnd.choice(["a", "b"]), pred=rnd.choice(["a", "b"]))
        elif qtype == "noul":
            rec.update(gold=rnd.random() < 0.5, noul=round(rnd.random(), 2))
        else:
            rec.update(gold=rnd.randint(0, 2), pred=round(rnd.uniform(0, 2), 2))
        row = record_to_row(i, rec)
        row["latency_ms"] = round(rnd.uniform(1, 50), 3)
        rows.append(row)
    return rows


@pytest.fixture(scope="module", params=["support", *(pytest.param(p, marks=pytest.mark.slow) for p in ("ties", "synthetic"))])
def demo(request, tmp_path_factory) -> Tuple[Path, dict]:
    """<tmp>/warehouse with run `demo` (the README's demo data, T3.1's ties.json, or seeded cases with
    ties and out-of-range confidences), exactly as docs/sql.md makes it, and its report."""
    base = tmp_path_factory.mktemp("docs")
    wh = base / "warehouse"
    if request.param == "support":
        args = ["data/support.answers.jsonl", "--dataset", "data/support.jsonl"]
    else:
        if request.param == "ties" and not (SPEC_FIXTURES / "ties.json").is_file():
            pytest.skip("spec fixtures not available")
        rows = fixture_rows("ties.json") if request.param == "ties" else _synthetic_rows()
        args = [str(write_jsonl(base / "answers.jsonl", rows))]
    cli("ingest", *args, "-w", str(wh), "--run-id", "demo", check=True)
    cli("report", "demo", "-w", str(wh), "--json", str(base / "report.json"), check=True)
    return base, json.loads((base / "report.json").read_text())


def _same(doc_value, report: Dict[str, float], metric: str, where: str) -> None:
    if doc_value is None:
        assert metric not in report, "%s: docs give no %s, the report has %r" % (where, metric, report.get(metric))
        return
    if isinstance(doc_value, float) and math.isnan(doc_value):
        assert metric not in report or math.isnan(report[metric]), where
        return
    assert metric in report, "%s: the report has no %s (docs give %r)" % (where, metric, doc_value)
    assert abs(float(doc_value) - report[metric]) <= TOL, (where, metric, doc_value, report[metric])


@pytest.mark.slow
def test_sql_md_reproduces_the_report(demo, monkeypatch):
    base, report = demo
    monkeypatch.chdir(base)                          # the docs read 'warehouse/...' relative paths
    con = duckdb.connect()
    checked = set()
    sql_blocks = blocks(DOCS / "sql.md", "sql")
    assert len(sql_blocks) >= 8
    for block in sql_blocks:
        first = block.splitlines()[0]
        result = con.execute(block)
        if not first.startswith("-- check:"):
            if result.description is not None:
                result.fetchall()                     # illustrative queries must run too
            continue
        target = first[len("-- check:"):].strip()
        columns = [d[0] for d in result.description]
        rows = result.fetchall()
        if target == "overall":
            assert len(rows) == 1, block
            for name, value in zip(columns, rows[0]):
                _same(value, report["overall"], name, "overall")
                checked.add(name)
        else:
            dim = target.split(".", 1)[1]
            groups = report["slices"].get(dim, {})
            assert sorted(r[0] for r in rows) == sorted(groups), (dim, [r[0] for r in rows], sorted(groups))
            for row in rows:
                for name, value in zip(columns[1:], row[1:]):
                    _same(value, groups[row[0]], name, "%s=%s" % (dim, row[0]))
            checked.add(target)
    assert REQUIRED <= checked, "docs/sql.md checks no query for %s" % sorted(REQUIRED - checked)
    assert {"slices.language", "slices.tag"} <= checked


def test_sql_md_ignores_an_uncommitted_partition(demo, monkeypatch, tmp_path):
    """The docs' `decisions` view reads committed runs only: an orphan case partition (a writer killed
    between the commit renames, docs/schema.md) does not change any checked number."""
    base, _ = demo
    orphan = tmp_path / "warehouse"
    import shutil

    shutil.copytree(base / "warehouse", orphan)
    shutil.copytree(orphan / "cases" / "run_id=demo", orphan / "cases" / "run_id=ghost")
    monkeypatch.chdir(tmp_path)
    con = duckdb.connect()
    for block in blocks(DOCS / "sql.md", "sql")[:1]:
        con.execute(block)
    assert con.execute("SELECT count(DISTINCT run_id) FROM decisions").fetchone() == (1,)
    raw = con.execute("SELECT count(DISTINCT run_id) FROM read_parquet('warehouse/cases/*/*.parquet', "
                      "hive_partitioning = true)").fetchone()
    assert raw == (2,)                                # the filter is what keeps the ghost out


@pytest.mark.parametrize("demo", ["support"], indirect=True)
def test_identity_md_recomputes_the_run_digests(demo):
    """The Python of docs/identity.md gives the digests laya-cases recorded (S5.1, S5.2, labelled rows)."""
    _, report = demo
    (code,) = blocks(DOCS / "identity.md", "python")
    namespace: Dict[str, object] = {}
    exec(compile(code, "docs/identity.md", "exec"), namespace)
    answers, dataset = str(ROOT / "data" / "support.answers.jsonl"), str(ROOT / "data" / "support.jsonl")
    assert namespace["dataset_sha256"](dataset) == report["config"]["dataset_sha256"]
    assert namespace["questions_sha256"](answers) == report["config"]["questions_sha256"]
    assert namespace["questions_sha256"](dataset) == report["config"]["questions_sha256"]
    assert namespace["labelled_rows_sha256"](answers) == report["extensions"]["run"]["labelled_rows_sha256"]
    assert namespace["labelled_rows_sha256"](dataset) == report["extensions"]["run"]["labelled_rows_sha256"]


@pytest.mark.skipif(not (SPEC_FIXTURES / "ds.jsonl").is_file(), reason="spec fixtures not available")
def test_identity_md_questions_digest_on_the_spec_vector():
    """T5.2: fixtures/ds.jsonl -> the spec's questions_sha256 and dataset_sha256."""
    (code,) = blocks(DOCS / "identity.md", "python")
    namespace: Dict[str, object] = {}
    exec(compile(code, "docs/identity.md", "exec"), namespace)
    ds = str(SPEC_FIXTURES / "ds.jsonl")
    assert namespace["questions_sha256"](ds) == "78e6762772d728e663ee39333bd307d7d7089ee8e4df559f31b3fa7b3dab99fe"
    assert namespace["dataset_sha256"](ds) == "7b9e51c6f75e6ea8c71d16558298234f856b0f348f29796df7756d939df0f9a8"
