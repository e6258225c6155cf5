"""S9.8: every published number is a function of the multiset of cases, identical to the last bit
under any row order or partitioning. Each T-fixture (and a random set) is ingested in several row
orders, and with tiny Parquet row groups so DuckDB scans it in parallel pieces; the serialised
`overall`, `slices` and `extensions.overall` / `extensions.slices` must be byte-identical. `cases`
is row-ordered by definition (S4.4), so it is compared as a multiset.
"""
from __future__ import annotations

import json
import math
import random
from typing import Any, Dict, List

import pytest

import laya_cases.record.recorder as record_module
from helpers import cli, fixture_rows, record_to_row
from laya_cases.report import build as R
from report_path import Store
from test_differential import make_set

PERMUTATIONS = 4


def _t3_4_rows():
    specs = [("a", math.nan, "en", None), ("b", 0.5, 5, None), ("a", 0.9, "", [1, None])]
    rows = []
    for i, (pred, conf, lang, tags) in enumerate(specs):
        rec = {"qid": "q", "qtype": "choice", "gold": "a", "pred": pred, "answer_confidence": conf, "language": lang}
        if tags is not None:
            rec["tags"] = tags
        rows.append(record_to_row(i, rec))
    return rows


def _t3_5_rows():
    pairs = [(1.2, True), (-0.1, False), (0.2, True), (0.7333333333333334, False), (0.7, True), (0.7, False)]
    return [record_to_row(i, {"qid": "q", "qtype": "choice", "gold": "a", "pred": "a" if ok else "b",
                              "answer_confidence": c, "language": "en" if i % 2 else "de"})
            for i, (c, ok) in enumerate(pairs)]


def _random_rows():
    rng = random.Random(98)
    rows: List[Dict[str, Any]] = []
    while len(rows) < 40:
        rows += make_set(rng)
    for i, row in enumerate(rows):          # states must stay unique across the concatenated sets
        row["state"] = "r%d" % i
    return rows


SETS = {"ties": lambda: fixture_rows("ties.json"), "edge1": lambda: fixture_rows("edge1.json"),
        "edge4": lambda: fixture_rows("edge4.json"), "t3_4": _t3_4_rows, "t3_5": _t3_5_rows,
        "random": _random_rows}


def fingerprint(doc: Dict[str, Any]) -> Dict[str, str]:
    """What must not move under a permutation, serialised exactly as the report file is."""
    return {"config": R.dumps(doc["config"]), "overall": R.dumps(doc["overall"]),
            "slices": R.dumps(doc["slices"]),
            "extensions.overall": R.dumps(doc["extensions"]["overall"]),
            "extensions.slices": R.dumps(doc["extensions"]["slices"]),
            "cases": R.dumps(sorted(json.dumps(c, sort_keys=True) for c in doc["cases"]))}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SETS))
def test_s9_8_row_order_and_partitioning_do_not_move_a_bit(tmp_path, monkeypatch, name):
    """S9.8: byte-identical reports over permutations of the rows and over row-group splits."""
    rows = SETS[name]()
    store = Store(tmp_path)
    tolerances = [0.5, 0.25]
    base = fingerprint(store.report(rows, score_within=tolerances, coverages=[0.3, 1.0]))
    rng = random.Random(len(rows))
    variants = []
    for i in range(PERMUTATIONS):
        order = list(rows)
        rng.shuffle(order) if i else order.reverse()
        variants.append(order)
    for i, order in enumerate(variants):
        if i % 2:                                 # every other run: one Parquet row group per 2 rows
            monkeypatch.setattr(record_module, "FLUSH_EVERY", 2)
        else:
            monkeypatch.setattr(record_module, "FLUSH_EVERY", 65536)
        mine = fingerprint(store.report(order, score_within=tolerances, coverages=[0.3, 1.0]))
        for part in base:
            assert mine[part] == base[part], "%s: %s moved under permutation %d" % (name, part, i)


def test_s9_8_the_check_can_fail(tmp_path):
    """The fingerprint sees a one-case change (the permutation test is not a tautology)."""
    rows = fixture_rows("ties.json")
    store = Store(tmp_path)
    base = fingerprint(store.report(rows))
    changed = [dict(r) for r in rows]
    changed[0] = dict(changed[0], answers={"intent": dict(changed[0]["answers"]["intent"],
                                                          answer_confidence=0.9000000000000001)})
    other = fingerprint(store.report(changed))
    assert other["overall"] != base["overall"] and other["cases"] != base["cases"]


@pytest.mark.slow
def test_report_twice_is_byte_identical(tmp_path):
    """S5.5 / S9.8: `laya-cases report` run twice on one run writes identical JSON and Markdown."""
    store = Store(tmp_path)
    rid = store.ingest(fixture_rows("ties.json"))
    outputs = []
    for i in range(2):
        json_path, md_path = tmp_path / ("r%d.json" % i), tmp_path / ("r%d.md" % i)
        proc = cli("report", rid, "-w", str(store.wh.root), "--json", str(json_path), "--markdown", str(md_path),
                   "--slice", "language", "--score-within", "0.5", "--coverage", "0.3", check=True)
        outputs.append((json_path.read_bytes(), md_path.read_bytes(), proc.stdout))
    assert outputs[0] == outputs[1]
    doc = json.loads(outputs[0][0])
    assert doc["overall"]["choice_accuracy"] == 4 / 6 and "extensions" in doc
    assert outputs[0][1].startswith(b"| metric | value |\n|---|---|\n")
