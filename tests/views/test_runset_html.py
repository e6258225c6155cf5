"""`stability`, `audit`, `rank` and `calibrate` with `--html FILE` (laya_cases/views/html/runset_view.py):
every number on the page is the command's `--json` number (read from the page's `data-v`, parsed with
html.parser), the file is self-contained (no script, nothing fetched) and the same bytes every time."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any, Dict, List

import pytest

from helpers import ROOT
from test_bad_input import run_cli

pytestmark = pytest.mark.slow          # four ingests, then each command twice

DATA = ROOT / "data"


class _Tables(HTMLParser):
    """Every table under its h2 heading: {heading: [[cell value]]}, a cell's value being its data-v
    (the exact number) when it has one, else its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: Dict[str, List[List[Any]]] = {}
        self.heading, self._in_h2, self._row, self._cell, self._v = "", False, None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self._in_h2, self.heading = True, ""
        elif tag == "table":
            self.tables[self.heading] = []
        elif tag == "tr":
            self._row = []
        elif tag == "td":
            self._cell, self._v = "", attrs.get("data-v")

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False
        elif tag == "td":
            self._row.append(self._v if self._v is not None else self._cell)
            self._cell = None
        elif tag == "tr" and self._row:
            self.tables[self.heading].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._in_h2:
            self.heading += data
        elif self._cell is not None:
            self._cell += data


def _tables(path) -> Dict[str, List[List[Any]]]:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tables


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("runset_html")
    wh = str(base / "wh")
    for name, path in (("minilm", "support.minilm.answers.jsonl"), ("int8", "support.int8.answers.jsonl"),
                       ("recorded", "support.answers.jsonl")):
        code, _, err = run_cli("ingest", DATA / path, "--dataset", DATA / "support.jsonl", "--run-id", name, "-w", wh)
        assert code == 0, err
    lines = (DATA / "support.minilm.answers.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for name, part in (("dev", lines[:8]), ("test", lines[8:])):
        (base / (name + ".jsonl")).write_text("".join(part), encoding="utf-8")
        code, _, err = run_cli("ingest", base / (name + ".jsonl"), "--run-id", name, "-w", wh)
        assert code == 0, err
    return base, wh


def _both(base, wh, name: str, *argv) -> tuple:
    """(the --json document, the HTML path) of one command; run twice, the two HTML files must match."""
    pages = []
    for i in (1, 2):
        page, doc = base / ("%s%d.html" % (name, i)), base / ("%s%d.json" % (name, i))
        code, _, err = run_cli(*argv, "--json", doc, "--html", page, "-w", wh)
        assert code in (0, 1), err
        pages.append(page)
    text = pages[0].read_bytes()
    assert text == pages[1].read_bytes()
    lowered = text.decode("utf-8").lower()
    assert "<script" not in lowered and "http://" not in lowered and "https://" not in lowered and "src=" not in lowered
    return json.loads(doc.read_text(encoding="utf-8")), pages[0]


def test_stability_page_holds_the_json_numbers(store):
    base, wh = store
    doc, page = _both(base, wh, "stability", "stability", "minilm", "int8", "recorded", "--by", "language",
                      "--max-unstable-rate", "0.01", "--show", "0")
    tables = _tables(page)
    per_group = tables["Per group"]
    assert [r[0] for r in per_group] == ["overall"] + ["language=%s" % k for k in sorted(doc["slices"]["language"])]
    overall = per_group[0]
    assert float(overall[4]) == doc["overall"]["unstable_rate"] and int(overall[3]) == doc["overall"]["unstable"]
    assert float(overall[6]) == doc["overall"]["mean_agreement"]
    ranges = tables["Accuracy a single run could show"][0]
    assert [float(v) for v in ranges[1:]] == [doc["overall"][k] for k in (
        "accuracy_mean", "expected_low", "expected_high", "accuracy_floor", "accuracy_ceiling", "run_min", "run_max")]
    # every unstable case is on the page, though the terminal showed none (--show 0)
    assert len(tables["Unstable cases"]) == len(doc["unstable_cases"]) > 0
    assert [int(r[0]) for r in tables["Unstable cases"]] == [c["row_index"] for c in doc["unstable_cases"]]
    assert "FAIL: " in page.read_text(encoding="utf-8") and doc["gate"]["failures"]


def test_audit_page_holds_the_queue(store):
    base, wh = store
    doc, page = _both(base, wh, "audit", "audit", "--runs", "minilm,recorded", "--min-agree", "1", "--top", "50")
    rows = _tables(page)["Review queue"]
    assert len(rows) == len(doc["cases"]) > 0
    for row, case in zip(rows, doc["cases"]):
        assert int(row[0]) == case["rank"] and int(row[1]) == case["row_index"]
        assert float(row[7]) == case["score"] and float(row[13]) == case["mean_confidence"]
        assert row[15] == case["case_id"] and row[14] == " ".join(case["agreeing_runs"])


def test_rank_page_holds_every_cell(store):
    base, wh = store
    doc, page = _both(base, wh, "rank", "rank", "minilm", "int8", "recorded", "--bootstrap", "200", "--by", "language")
    tables = _tables(page)
    for metric, place in doc["metrics"].items():
        rows = tables["%s, overall" % metric]
        assert [r[1] for r in rows] == [c["run_id"] for c in place["overall"]]
        assert [float(r[2]) for r in rows] == [c["value"] for c in place["overall"]]
        for key, cells in place.get("language", {}).items():
            assert [int(r[5]) for r in tables["%s, language=%s" % (metric, key)]] == [c["rank"] for c in cells]


def test_calibration_page_holds_before_after_and_both_reliability_tables(store):
    base, wh = store
    doc, page = _both(base, wh, "calibrate", "calibrate", "--fit", "dev", "--apply", "test")
    tables = _tables(page)
    scored = doc["apply"]
    metrics = {r[0]: r for r in tables["Before and after"]}
    for key, name in (("ece", "ece"), ("ece_equal_mass", "ece_equal_mass"), ("ece_classwise", "ece_classwise"),
                      ("brier", "brier")):
        before, after = scored["before"][key], scored["after"][key]
        assert (metrics[name][1], metrics[name][2]) == tuple("" if v is None else repr(v) for v in (before, after))
    fit = tables["Fit on dev"]
    assert [float(r[3]) for r in fit if r[1] == "temperature"] == [
        g["temperature"] for g in doc["fit"]["groups"] if g["method"] == "temperature"]
    for phase, heading in (("after", "Reliability after (15 bins; too small: fewer than 10 cases)"),
                           ("before", "Reliability before")):
        bins = [b for b in scored["reliability"][phase] if b["n_b"]]
        rows = tables[heading]
        assert [int(r[3]) for r in rows] == [b["n_b"] for b in bins]
        assert [r[7] == "too small" for r in rows] == [b["too_small"] for b in bins]
