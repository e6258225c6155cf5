"""One report, one trip to the store: `report RUN --json --html --markdown --baseline B` with a gate opens
the warehouse once, for the document, the JSON stream, the HTML case summary and the baseline's report
(laya_cases/report/session.py), and writes the same bytes as the separate connections did."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, flipped_support_answers
from laya_cases.report import build as R
from laya_cases.report import stream
from laya_cases.query.sql import connect
from laya_cases.store.local import LocalWarehouse
from laya_cases.store.warehouse import Warehouse
from laya_cases.views.html.files import case_summary
from laya_cases_cli.app import app

DATASET = ROOT / "data" / "support.jsonl"


def _store(tmp_path: Path) -> Path:
    wh = tmp_path / "wh"
    for run, answers in (("a", ROOT / "data" / "support.answers.jsonl"),
                         ("b", flipped_support_answers(tmp_path / "b.answers.jsonl"))):
        result = CliRunner().invoke(app, ["ingest", str(answers), "--dataset", str(DATASET), "-w", str(wh),
                                          "--run-id", run])
        assert result.exit_code == 0, result.output
    return wh


@pytest.mark.slow
def test_a_report_with_every_output_and_a_baseline_opens_the_store_once(tmp_path, monkeypatch):
    wh = _store(tmp_path)
    opened: List[list] = []
    real = LocalWarehouse.connect

    def counted(self, run_ids=None, variants=False):
        opened.append(list(run_ids or []))
        return real(self, run_ids, variants)

    monkeypatch.setattr(LocalWarehouse, "connect", counted)
    out = {k: tmp_path / ("r.%s" % k) for k in ("json", "html", "md")}
    result = CliRunner().invoke(app, ["report", "a", "-w", str(wh), "--json", str(out["json"]), "--html",
                                      str(out["html"]), "--markdown", str(out["md"]), "--baseline", "b",
                                      "--slice", "language"])
    assert result.exit_code == 1 and "baseline comparison failed" in result.output    # b was compared
    assert opened == [["a", "b"]]
    assert json.loads(out["json"].read_text())["cases"] and out["html"].stat().st_size > 0

    opened.clear()                                   # a baseline file: the run alone, still once
    base = tmp_path / "b.json"
    assert CliRunner().invoke(app, ["report", "b", "-w", str(wh), "--json", str(base)]).exit_code == 0
    opened.clear()
    result = CliRunner().invoke(app, ["report", "a", "-w", str(wh), "--json", str(out["json"]), "--html",
                                      str(out["html"]), "--baseline", str(base)])
    assert result.exit_code == 1 and "baseline comparison failed" in result.output
    assert opened == [["a"]]


@pytest.mark.slow
def test_the_two_run_connection_reads_what_the_run_alone_reads(tmp_path):
    """Every report query filters by run id: the document, its JSON cases and the HTML case summary of a
    run are the same over a connection that also holds the baseline run."""
    wh = Warehouse(_store(tmp_path))
    options = R.Options(include_cases=True, score_within=(0.5,), thresholds=(0.6,), bootstrap=20, seed=3)
    for run in ("a", "b"):
        alone, both = connect(wh, [run]), connect(wh, ["a", "b"])
        doc_alone, doc_both = R.build(alone, run, options), R.build(both, run, options)
        assert R.dumps(doc_alone) == R.dumps(doc_both)
        assert case_summary(alone, run) == case_summary(both, run)
        texts = []
        for con, doc in ((alone, doc_alone), (both, doc_both)):
            target = tmp_path / ("%s-%d.json" % (run, len(texts)))
            stream.save(str(target), doc, wh, run, options.score_within, con=con)
            texts.append(target.read_bytes())
        assert texts[0] == texts[1]
