"""Confidence-threshold cuts (S9.3): accept paired cases whose gate confidence (S2.8) is >= t."""
from __future__ import annotations

from helpers import fixture_rows, write_jsonl
from laya_cases.report import build as R
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect


def _doc(tmp_path, rows, thresholds):
    wh = Warehouse(tmp_path / "wh")
    rid = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", rows)), run_id="t").run_id
    return R.build(connect(wh, [rid]), rid, R.Options(thresholds=thresholds))


def test_s9_3_threshold_cut_on_ties(tmp_path):
    doc = _doc(tmp_path, fixture_rows("ties.json"), [0.8, 0.95, 2.0])
    cov = doc["extensions"]["overall"]["coverage"]
    # paired confidences 1.0 | 0.9 x3 | 0.8 | 0.7 x2 | 0.6 | 0.5 with hits T | T F T | T | T T | F | F
    assert cov["confidence>=0.8"] == {"N": 9, "accepted": 5, "hits": 4, "unevaluated": 0, "threshold": 0.8,
                                      "coverage_actual": 5 / 9, "selective_accuracy": 0.8}
    assert cov["confidence>=0.95"]["accepted"] == 1 and cov["confidence>=0.95"]["selective_accuracy"] == 1.0
    assert cov["confidence>=2.0"]["accepted"] == 0 and cov["confidence>=2.0"]["selective_accuracy"] is None
    assert "confidence>=0.8" not in doc["overall"]                  # extensions only (S0.2)


def test_s2_8_gate_confidence_has_no_fallbacks(tmp_path):
    """A paired case whose only confidence comes from the noul fallback is unevaluated at every cut."""
    rows = fixture_rows("edge1.json")        # n1: noul only -> metrics confidence 0.7, gate none
    cov = _doc(tmp_path, rows, [0.5])["extensions"]["overall"]["coverage"]["confidence>=0.5"]
    # paired: c1 (0.42 via confidence), c2 (probabilities only: no gate), n1 (noul only: no gate), n2 (0.61)
    assert cov["N"] == 4 and cov["unevaluated"] == 2 and cov["accepted"] == 1 and cov["hits"] == 1
