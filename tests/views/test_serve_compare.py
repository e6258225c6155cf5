"""The N-run compare pages of `laya-cases serve` (issue 32 item 4): /compare?runs=A,B,C equals `diff --json`
of each run against the first (every number but the interval, which is checked against an independent numpy
computation from `laya-cases sql` rows), the per-slice grid equals `stability --json`'s run_accuracy, the case
grid's filters equal a Python computation from `laya-cases sql` rows, refusals are 400 pages of one sentence,
and hostile URLs leave the store's files as they were."""
from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from pathlib import Path
from typing import Dict, List
from urllib.parse import urlencode

import pytest

from helpers import ROOT, snapshot_tree
from inprocess import cli
from test_html_report import make_store

pytest.importorskip("starlette", reason="laya-cases serve needs: pip install -e '.[serve]' from the clone")
pytest.importorskip("httpx", reason="Starlette's TestClient needs: pip install httpx")

RUNS = ["demo", "other", "third"]
URL = "/compare?runs=demo,other,third"


def third_answers(path: Path) -> Path:
    """data/support.answers.jsonl changed another way: every fourth row's spam answer turned over (with its
    confidence) and every fifth row's choice moved to the last option."""
    lines = []
    for i, line in enumerate((ROOT / "data" / "support.answers.jsonl").read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.startswith("#"):
            continue
        row = json.loads(line)
        for qid, answer in list(row["answers"].items()):
            if answer.get("type") == "noul" and i % 4 == 0:
                answer["noul"] = 1 - answer["noul"] if isinstance(answer["noul"], (int, float)) else answer["noul"]
                if isinstance(answer.get("confidence"), (int, float)):
                    answer["confidence"] = round(1 - answer["confidence"], 4)
            if answer.get("type") == "choice" and i % 5 == 1:
                answer["choice"] = sorted(answer.get("probabilities") or [answer["choice"]])[-1]
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    base = tmp_path_factory.mktemp("compare")
    root = make_store(base)
    wh = Warehouse(root)
    ingest(wh, str(third_answers(base / "third.answers.jsonl")), run_id="third",
           dataset_path=str(ROOT / "data" / "support.jsonl"))
    half = base / "half.answers.jsonl"                 # another dataset: the first half of the rows
    half.write_text("\n".join((ROOT / "data" / "support.answers.jsonl").read_text(encoding="utf-8").splitlines()[:8])
                    + "\n", encoding="utf-8")
    ingest(wh, str(half), run_id="half")
    return root


@pytest.fixture(scope="module")
def client(store):
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app

    return TestClient(create_app(store), raise_server_exceptions=False)


def sql_rows(store: Path, query: str) -> List[dict]:
    return json.loads(cli("sql", query, "-w", str(store), "--format", "json", check=True).stdout)


def table_rows(text: str, cls: str) -> List[List[str]]:
    """The cells of a table: each cell's data-v when it has one, else its text."""
    body = re.search(r'<table class="%s">.*?<tbody>(.*?)</tbody>' % re.escape(cls), text, re.S).group(1)
    out = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        cells = []
        for attrs, inner in re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S):
            v = re.search(r'data-v="([^"]*)"', attrs)
            cells.append(html.unescape(v.group(1)) if v else html.unescape(re.sub(r"<[^>]+>", "", inner)))
        out.append(cells)
    return out


DELTA_FIELDS = ("compared", "paired", "accuracy_a", "accuracy_b", "delta", "ci_lower", "ci_upper", "right_to_wrong",
                "wrong_to_right", "flip_rate", "mcnemar_p", "mean_confidence_shift")


def _exact(value) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


@pytest.mark.slow
def test_three_run_deltas_equal_diff_json_of_each_run_against_the_first(client, store, tmp_path):
    text = client.get(URL + "&by=language").text
    overall = {r[0]: dict(zip(DELTA_FIELDS, r[1:])) for r in table_rows(text, "compare-deltas")}
    by = {(r[0], r[1]): dict(zip(DELTA_FIELDS, r[2:])) for r in table_rows(text, "compare-deltas-by")}
    assert sorted(overall) == ["other", "third"]
    for run in ("other", "third"):
        out = tmp_path / ("%s.json" % run)
        cli("diff", "demo", run, "--by", "language", "-w", str(store), "--json", str(out), check=True)
        d = json.loads(out.read_text(encoding="utf-8"))
        for field in DELTA_FIELDS:
            if not field.startswith("ci_"):
                assert overall[run][field] == _exact(d[field]), (run, field)
        groups = {key: g for (key, r), g in by.items() if r == run}
        assert sorted(groups) == sorted(d["slices"]["language"])
        for key, g in d["slices"]["language"].items():
            for field in DELTA_FIELDS:
                if not field.startswith("ci_"):
                    assert groups[key][field] == _exact(g[field]), (run, key, field)
    assert overall["third"]["right_to_wrong"] != "0" or overall["third"]["wrong_to_right"] != "0"


def clustered_interval(pairs: List[tuple]):
    """Independent: the row-clustered normal interval of delta = sum(d_r) / sum(n_r) from (row, a, b) pairs."""
    import numpy as np

    rows = sorted({r for r, _, _ in pairs})
    n = np.array([sum(1 for r, _, _ in pairs if r == row) for row in rows], dtype=float)
    d = np.array([sum(int(b) - int(a) for r, a, b in pairs if r == row) for row in rows], dtype=float)
    delta = d.sum() / n.sum()
    half = 1.959963984540054 * math.sqrt(len(rows) / (len(rows) - 1) * ((d - delta * n) ** 2).sum()) / n.sum()
    return delta - half, delta + half


@pytest.mark.slow
def test_intervals_equal_an_independent_clustered_computation(client, store):
    text = client.get(URL).text
    overall = {r[0]: dict(zip(DELTA_FIELDS, r[1:])) for r in table_rows(text, "compare-deltas")}
    cases = sql_rows(store, "SELECT a.row_index, a.correct AS a, b.correct AS b, b.run_id FROM cases a JOIN cases b "
                            "USING (case_id) WHERE a.run_id = 'demo' AND b.run_id IN ('other', 'third') "
                            "AND a.correct IS NOT NULL AND b.correct IS NOT NULL")
    for run in ("other", "third"):
        lo, hi = clustered_interval([(c["row_index"], c["a"], c["b"]) for c in cases if c["run_id"] == run])
        assert float(overall[run]["ci_lower"]) == pytest.approx(lo, abs=1e-12)
        assert float(overall[run]["ci_upper"]) == pytest.approx(hi, abs=1e-12)
        assert float(overall[run]["ci_lower"]) < float(overall[run]["delta"]) < float(overall[run]["ci_upper"])
    assert "normal approximation" in text and "full diff" in text


@pytest.mark.slow
def test_per_slice_grid_equals_stability_run_accuracy(client, store, tmp_path):
    out = tmp_path / "s.json"
    cli("stability", *RUNS, "--by", "language", "-w", str(store), "--json", str(out), check=True)
    doc = json.loads(out.read_text(encoding="utf-8"))
    rows = table_rows(client.get(URL + "&by=language").text, "compare-slices")
    shown = {("overall" if r[0] == "overall" else "language=%s" % r[0]): r[1:] for r in rows}
    assert sorted(shown) == sorted(doc["run_accuracy"])
    for group, entries in doc["run_accuracy"].items():
        by_run = {e["run_id"]: e["accuracy"] for e in entries}
        assert shown[group] == [_exact(by_run.get(run)) for run in RUNS], group


def expected_grid(store: Path) -> Dict[str, List[tuple]]:
    """Independent: each filter's cases as (row_index, qid), from the runs' cases in `laya-cases sql` rows."""
    cases = sql_rows(store, "SELECT run_id, case_id, row_index, qid, predicted, correct FROM cases "
                            "WHERE run_id IN ('demo', 'other', 'third')")
    per: Dict[str, List[dict]] = {}
    for c in cases:
        per.setdefault(c["case_id"], []).append(c)
    out: Dict[str, List[tuple]] = {"": [], "outcome_differs": [], "prediction_differs": [], "all_wrong": []}
    for group in per.values():
        key = (group[0]["row_index"], group[0]["qid"])
        scored = [c["correct"] for c in group if c["correct"] is not None]
        answers = {c["predicted"] for c in group if c["predicted"] is not None}
        out[""].append(key)
        if any(scored) and not all(scored):
            out["outcome_differs"].append(key)
        if len(answers) >= 2:
            out["prediction_differs"].append(key)
        if len(scored) == len(RUNS) and not any(scored):
            out["all_wrong"].append(key)
    return {k: sorted(v) for k, v in out.items()}


def walk(client, show: str, limit: int = 7) -> List[dict]:
    query = {"runs": ",".join(RUNS), "format": "json", "limit": limit}
    if show:
        query["show"] = show
    rows: List[dict] = []
    while True:
        doc = json.loads(client.get("/compare/cases?" + urlencode(query)).text)
        rows += doc["rows"]
        if doc["next"] is None:
            return rows
        query.update(after_row=doc["next"]["after_row"], after_qid=doc["next"]["after_qid"])


@pytest.mark.slow
def test_case_grid_filters_equal_an_independent_computation(client, store):
    expected = expected_grid(store)
    assert all(expected[k] for k in expected), {k: len(v) for k, v in expected.items()}   # every filter keeps some
    for show, keys in expected.items():
        rows = walk(client, show)
        assert [(r["row_index"], r["qid"]) for r in rows] == keys, show
        page = client.get("/compare/cases?" + urlencode(dict({"runs": ",".join(RUNS), "limit": 500},
                                                             **({"show": show} if show else {})))).text
        assert re.search(r'id="n-matching" data-v="(\d+)"', page).group(1) == str(len(keys))
        assert len(table_rows(page, "compare-grid")) == len(keys)


def test_a_run_without_the_case_has_an_empty_place():
    from laya_cases.views.serve.compare_pages import per_run

    row = {"case_id": "c", "row_index": 4, "qid": "q", "language_key": None, "model_key": None, "tags": [],
           "expected_json": '"x"', "run_indexes": [1, 3], "row_indexes": [4, 4], "predictions": ["a", "b"],
           "corrects": [True, False], "confidences": [0.5, None]}
    entry = per_run(["r1", "r2", "r3"], row)
    assert entry["runs"]["r2"] is None
    assert entry["runs"]["r3"] == {"row_index": 4, "predicted": "b", "correct": False, "confidence": None}


def test_case_grid_links_each_runs_case_page_and_exports_csv(client, store):
    text = client.get("/compare/cases?runs=demo,other,third&show=outcome_differs&limit=3").text
    for run in RUNS:
        assert 'href="/run/%s/case?row=' % run in text
    csv_text = client.get("/compare/cases?runs=demo,other,third&show=outcome_differs&limit=3&format=csv").text
    lines = csv_text.splitlines()
    assert lines[0].startswith("row_index,qid,language_key,model_key,expected_json,demo.predicted,demo.correct")
    assert len(lines) == 4


def leaves(prefix: str, value) -> Dict[str, str]:
    if isinstance(value, dict) and value:
        return {k: v for key, inner in value.items() for k, v in leaves(prefix + "." + key, inner).items()}
    return {prefix: json.dumps(value, sort_keys=True)}


@pytest.mark.slow
def test_settings_show_only_the_keys_that_differ(client, store):
    text = client.get(URL).text
    runs = {r["run_id"]: r for r in sql_rows(store, "SELECT * FROM runs WHERE run_id IN ('demo', 'other', 'third')")}
    differ = [k for k in sorted(runs["demo"]) if k not in ("run_id", "settings_json", "config_json")
              and len({str(runs[r][k]) for r in RUNS}) > 1]
    for column in ("settings_json", "config_json"):           # opened into dotted keys, leaf by leaf
        opened = {r: leaves(column[:-5], json.loads(runs[r][column])) for r in RUNS}
        keys = set().union(*opened.values())
        differ += [k for k in keys if len({opened[r].get(k, "(absent)") for r in RUNS}) > 1]
    shown = [r[0] for r in table_rows(text, "compare-settings")]
    assert sorted(shown) == sorted(differ) and "settings.answers" in shown
    equal = html.unescape(re.search(r'id="settings-equal">Equal in every run: (.*?)\.</p>', text).group(1)).split(", ")
    assert "labelled_rows_sha256" in equal and "questions_sha256" in equal and not set(equal) & set(shown)


REFUSED = {
    "/compare?runs=demo": "2 to 10 runs, got 1",
    "/compare?runs=" + ",".join("r%d" % i for i in range(11)): "2 to 10 runs, got 11",
    "/compare?runs=demo,other,demo": "named twice",
    "/compare?runs=demo,nope": "no committed run",
    "/compare?runs=demo,half": "runs of one dataset",
    "/compare/cases?runs=demo,half": "runs of one dataset",
    "/compare?run=demo&run=other&runs=third": "not both",
    "/compare?runs=demo,other&by=nope": "by",
    "/compare/cases?runs=demo,other&show=maybe": "show",
    "/compare/cases?runs=demo,other&format=xml": "format",
    "/compare/cases?runs=demo,other&after_row=3": "go together",
}


def test_refusals_are_one_sentence_400_pages(client):
    for url, needle in REFUSED.items():
        r = client.get(url)
        assert r.status_code == 400, url
        message = html.unescape(re.search(r'<p id="error">(.*?)</p>', r.text, re.S).group(1))
        assert needle in message and message.count(". ") == 0 and "\n" not in message, (url, message)


HOSTILE = [
    "/compare?runs=demo,other%27%20OR%201=1--", "/compare?runs=demo,..%2fother", "/compare?runs=demo,other%00",
    "/compare?runs=demo,%F0%9F%92%A3", "/compare?runs=demo,other&by=language%27--", "/compare?runs=" + "a," * 400,
    "/compare?runs=demo,other&runs=third", "/compare/cases?runs=demo,other&limit=0",
    "/compare/cases?runs=demo,other&limit=99999999999999999999", "/compare/cases?runs=demo,other&after_row=-1&after_qid=x",
    "/compare/cases?runs=demo,other&after_row=1&after_qid=%00", "/compare/cases?runs=demo,other&show=all_wrong%3B",
    "/compare/cases?runs=demo,other&format=csv&format=json", "/compare/cases?runs=demo,other&x=1",
    "/compare/cases?runs=demo,other&after_row=9223372036854775808&after_qid=intent",
    "/compare?runs=demo,other&sort=third", "/compare?runs=demo,other&sort=accuracy", "/compare?runs=demo,other&dir=up",
    "/compare?runs=demo,other&format=xml", "/compare?runs=demo,other&sort=demo&sort=other",
]


@pytest.mark.slow
def test_hostile_urls_give_400s_and_leave_the_store_unchanged(client, store):
    before = snapshot_tree(store)
    for url in HOSTILE:
        r = client.get(url)
        assert r.status_code == 400, (url, r.status_code)
        assert "Traceback" not in r.text and "<script" not in r.text.lower() and 'id="error"' in r.text
    odd = client.get("/compare/cases?" + urlencode({"runs": "demo,other", "after_row": 1,
                                                    "after_qid": "x' OR 1=1; DROP TABLE cases--"}))
    assert odd.status_code == 200                # a keyset text is a bound value: it only orders
    assert client.post(URL).status_code == 405
    assert snapshot_tree(store) == before


def test_good_urls_answer_200(client):
    """The pages the refusals above are refused against answer (so the 400s are the parameters' doing)."""
    for url in (URL, URL + "&by=tag", "/compare?run=demo&run=other", "/compare/cases?runs=demo,other&show=all_wrong",
                "/compare?a=demo&b=other"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert "<script" not in r.text.lower()


@pytest.mark.slow
def test_tag_groups_equal_diff_json_too(client, store, tmp_path):
    """A case is in each of its tags' groups (unnested), as in diff's slices."""
    rows = table_rows(client.get(URL + "&by=tag").text, "compare-deltas-by")
    groups = {r[0]: dict(zip(DELTA_FIELDS, r[2:])) for r in rows if r[1] == "third"}
    out = tmp_path / "t.json"
    cli("diff", "demo", "third", "--by", "tag", "-w", str(store), "--json", str(out), check=True)
    d = json.loads(out.read_text(encoding="utf-8"))["slices"]["tag"]
    assert sorted(groups) == sorted(d) and len(d) >= 2
    for key, g in d.items():
        assert [groups[key][f] for f in ("paired", "delta", "mcnemar_p")] == [_exact(g[f]) for f in
                                                                            ("paired", "delta", "mcnemar_p")]


@pytest.mark.slow
def test_compare_pages_escape_stored_values(tmp_path):
    from starlette.testclient import TestClient

    from helpers import record_to_row, write_jsonl
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse
    from laya_cases.views.serve import create_app

    evil = '<script>alert("x")</script>&\'"'
    rows = [record_to_row(i, {"qid": evil, "qtype": "choice", "gold": evil, "pred": "b" if i % 2 else evil,
                              "answer_confidence": 0.5 + i / 10, "language": evil, "tags": [evil], "model": evil})
            for i in range(4)]
    wh = Warehouse(tmp_path / "wh")
    path = write_jsonl(tmp_path / "evil.jsonl", rows)
    ingest(wh, str(path), run_id="evil")
    ingest(wh, str(path), run_id="evil2")
    client = TestClient(create_app(wh), raise_server_exceptions=False)
    for url in ("/compare?runs=evil,evil2&by=language", "/compare?runs=evil,evil2&by=tag",
                "/compare/cases?runs=evil,evil2", "/compare/cases?runs=evil,evil2&show=all_wrong"):
        r = client.get(url)
        assert r.status_code == 200 and "<script" not in r.text.lower(), url
    assert "alert(&quot;x&quot;)" in client.get("/compare/cases?runs=evil,evil2").text


@pytest.mark.slow
def test_same_bytes_from_a_fresh_app(client, store):
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app

    other = TestClient(create_app(store), raise_server_exceptions=False)
    for url in (URL + "&by=language", "/compare/cases?runs=demo,other,third&show=prediction_differs",
                "/compare/cases?runs=demo,other,third&format=json&limit=9"):
        assert client.get(url).content == other.get(url).content, url


@pytest.mark.slow
def test_the_page_sorts_its_slices_by_a_run_and_is_taken_away(client, store, tmp_path):
    """`sort=RUN&dir=desc` orders the per-slice rows by that run's accuracy (overall stays first); the JSON
    has every number of the page and the CSV its deltas, read here against stability's run_accuracy."""
    out = tmp_path / "s.json"
    cli("stability", *RUNS, "--by", "language", "-w", str(store), "--json", str(out), check=True)
    doc = json.loads(out.read_text(encoding="utf-8"))
    acc = {group.split("=", 1)[1]: {e["run_id"]: e["accuracy"] for e in entries}
           for group, entries in doc["run_accuracy"].items() if group != "overall"}
    want = sorted(acc, key=lambda g: (-acc[g][RUNS[1]], g))
    rows = table_rows(client.get(URL + "&by=language&sort=%s&dir=desc" % RUNS[1]).text, "compare-slices")
    assert [r[0] for r in rows] == ["overall"] + want
    taken = json.loads(client.get(URL + "&by=language&format=json").text)
    assert {(r["run_id"], r["key"]): r["accuracy"] for r in taken["slices"] if r["dim"] != "overall"} == \
        {(run, g): a for g, by_run in acc.items() for run, a in by_run.items()}
    lines = list(csv.DictReader(io.StringIO(client.get(URL + "&by=language&format=csv").text)))
    assert [(r["run_id"], r["dim"], r["key"], r["delta"]) for r in lines] == \
        [(d["run_id"], d["dim"], d["key"] or "", _exact(d["delta"])) for d in taken["deltas"]]
