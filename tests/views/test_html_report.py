"""`report --html` and `diff --html` (issue 13): one self-contained file, every number of the report
JSON shown (exact value in data-v), deterministic bytes, every value escaped, small for a big run."""
from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import ROOT, cli, flipped_support_answers, snapshot_tree
from laya_cases.query.sql import connect

ANSWERS = ROOT / "data" / "support.answers.jsonl"
DATASET = ROOT / "data" / "support.jsonl"


def make_store(base: Path) -> Path:
    """A warehouse with the bundled support run `demo` and a changed copy `other`."""
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(base / "warehouse")
    ingest(wh, str(ANSWERS), run_id="demo", dataset_path=str(DATASET))
    ingest(wh, str(flipped_support_answers(base / "other.answers.jsonl")), run_id="other", dataset_path=str(DATASET))
    return base / "warehouse"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("html"))


def render(store: Path, run_id: str = "demo", bootstrap: int = 200) -> tuple:
    """(html text, report doc) as `report --html` builds them, in process."""
    from laya_cases.report import build as R
    from laya_cases.views.html.files import case_summary, report_html
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(store)
    options = R.Options(coverages=[0.5], thresholds=[0.7], bootstrap=bootstrap, include_cases=False)
    doc = R.build(connect(wh, [run_id]), run_id, options)
    return report_html(doc, case_summary(connect(wh, [run_id]), run_id)), doc


def data_values(text: str) -> list:
    return [html.unescape(v) for v in re.findall(r'data-v="([^"]*)"', text)]


def assert_self_contained(text: str) -> None:
    lowered = text.lower()
    for needle in ("<script", "<link", "<img", "<iframe", "src=", "@import", "@font-face", "https:"):
        assert needle not in lowered, needle
    assert re.findall(r"url\((?!#)", lowered) == []               # only the charts' own clip paths: url(#id)
    assert set(re.findall(r"http://[^\"' ]+", text)) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def charted(doc: dict) -> int:
    """The confidence histograms a report page draws: one per slice dimension of two or more groups."""
    return sum(1 for groups in doc["slices"].values() if len(groups) > 1)


def section(text: str, cls: str) -> str:
    match = re.search(r'<table class="%s">.*?</table>' % re.escape(cls), text, re.S)
    assert match, cls
    return match.group(0)


@pytest.mark.slow
def test_cli_report_html_shows_every_overall_number_of_the_json(store, tmp_path):
    page, js = tmp_path / "r.html", tmp_path / "r.json"
    cli("report", "demo", "-w", str(store), "--html", str(page), "--json", str(js), "--bootstrap", "200",
        "--coverage", "0.5", check=True)
    text = page.read_text(encoding="utf-8")
    doc = json.loads(js.read_text(encoding="utf-8"))
    assert_self_contained(text)
    overall = section(text, "overall")
    for name, value in doc["overall"].items():
        row = re.search(r'<tr><td id="m-%s">.*?</tr>' % re.escape(name), overall, re.S).group(0)
        assert data_values(row)[0] == json.dumps(value), name
        ci = doc["extensions"]["overall"][name].get("ci")
        if ci:                                          # the interval columns are the JSON's bounds
            assert data_values(row)[1:] == [json.dumps(ci["lower"]), json.dumps(ci["upper"])], name
    for dim, groups in doc["slices"].items():          # every slice value, in its table
        table = re.search(r'<h3 id="slice-%s">.*?</table>' % dim, text, re.S).group(0)
        shown = set(data_values(table))
        assert all(json.dumps(v) in shown for g in groups.values() for v in g.values()), dim
    cut = doc["extensions"]["overall"]["coverage"]["0.5"]
    assert json.dumps(cut["cut_confidence"]) in data_values(section(text, "coverage"))
    assert text.count("<svg") == 2 + charted(doc) and "Reliability" in text and "Risk-coverage" in text
    assert "Most confident wrong answers" in text


def test_the_check_can_fail(store):
    """The data-v check above sees a changed number (it is not a tautology)."""
    text, doc = render(store, bootstrap=0)
    assert json.dumps(doc["overall"]["ece"]) in data_values(text)
    assert json.dumps(doc["overall"]["ece"] + 1e-12) not in data_values(text)


@pytest.mark.slow
def test_same_run_same_bytes_also_under_row_permutation(store, tmp_path):
    import shutil

    first, _ = render(store)
    again, _ = render(store)
    assert first == again
    copy = tmp_path / "permuted"
    shutil.copytree(store, copy)
    for part in (copy / "cases" / "run_id=demo").glob("*.parquet"):
        table = pq.read_table(part)
        order = list(range(table.num_rows))[::-1]
        order = order[1::2] + order[0::2]
        pq.write_table(table.take(order), part, row_group_size=7)
    permuted, _ = render(copy)
    assert permuted == first


def test_every_value_is_escaped(tmp_path):
    from helpers import record_to_row, write_jsonl
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    evil = '<script>alert("x")</script>&\'"'
    rows = [record_to_row(i, {"qid": evil, "qtype": "choice", "gold": "a", "pred": "b" if i % 2 else "a",
                              "answer_confidence": 0.5 + i / 10, "language": evil, "tags": [evil]})
            for i in range(4)]
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(write_jsonl(tmp_path / "evil.jsonl", rows)), run_id="evil")
    text, _ = render(tmp_path / "wh", "evil", bootstrap=0)
    assert "<script" not in text and "alert(&quot;x&quot;)" in text


def test_a_10k_case_run_gives_a_small_file(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic
    from laya_cases.store.warehouse import Warehouse

    synthetic.write_run(Warehouse(tmp_path / "wh"), "big", synthetic.decisions(10000, seed=1))
    text, _ = render(tmp_path / "wh", "big", bootstrap=0)
    size = len(text.encode("utf-8"))
    assert size < 200_000, size                      # well under the 2 MB of a CI artifact
    assert_self_contained(text)


@pytest.mark.slow
def test_cli_diff_html_has_flips_and_slice_deltas_with_intervals(store, tmp_path):
    page, js = tmp_path / "d.html", tmp_path / "d.json"
    before = snapshot_tree(store)
    for _ in range(2):
        cli("diff", "demo", "other", "--by", "language", "-w", str(store), "--html", str(page), "--json", str(js),
            "--bootstrap", "200", check=True)
        text = page.read_bytes()
    cli("diff", "demo", "other", "--by", "language", "-w", str(store), "--html", str(tmp_path / "d2.html"),
        "--bootstrap", "200", check=True)
    assert (tmp_path / "d2.html").read_bytes() == text          # deterministic
    assert snapshot_tree(store) == before
    text = text.decode("utf-8")
    d = json.loads(js.read_text(encoding="utf-8"))
    assert_self_contained(text)
    assert "Flipped cases (%d)" % len(d["flips"]) in text and d["flips"]
    summary = data_values(section(text, "diff-summary"))
    for key in ("right_to_wrong", "wrong_to_right", "paired", "accuracy_a", "accuracy_b", "delta", "mcnemar_p"):
        assert json.dumps(d[key]) in summary, key
    assert 'data-lo="%r"' % d["ci95"][0] in text
    slices = data_values(section(text, "diff-slices"))
    for g in d["slices"]["language"].values():
        assert json.dumps(g["delta"]) in slices and json.dumps(g["ci95"][0]) in slices
