"""`laya-cases serve` through Starlette's TestClient (issue 13): every page answers, its numbers are
`report --json`'s and `diff --json`'s, filters and paging are pushed into DuckDB, and URL fuzzing gives
400 pages and leaves the store's files as they were."""
from __future__ import annotations

import csv
import html
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, cli, snapshot_tree, wait_for
from test_html_report import data_values, make_store
from laya_cases.query.sql import connect

pytest.importorskip("starlette", reason="laya-cases serve needs: pip install -e '.[serve]' from the clone")
pytest.importorskip("httpx", reason="Starlette's TestClient needs: pip install httpx")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def client(store):
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app

    client = TestClient(create_app(store), raise_server_exceptions=False)
    client.app_store = store
    return client


def report_json(store: Path, *args: str) -> dict:
    return json.loads(cli("report", "demo", "-w", str(store), "--json", "-", "--no-cases", *args, check=True).stdout)


def test_runs_page_lists_every_run_with_its_identity(client):
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    for needle in ('href="/run/demo"', 'href="/run/other"', "labelled_rows_sha256", 'action="/compare"'):
        assert needle in r.text
    assert "<script" not in r.text.lower()
    from laya_cases.store.warehouse import Warehouse

    digest = connect(Warehouse(client.app_store)).execute(
        "SELECT labelled_rows_sha256 FROM runs WHERE run_id = 'demo'").fetchone()[0]
    assert 'title="%s"' % digest in r.text                 # identity: the full digest, shortened on screen


@pytest.mark.slow
def test_run_page_numbers_equal_report_json(client, store):
    doc = report_json(store)
    text = client.get("/run/demo").text
    overall = re.search(r'<table class="overall">.*?</table>', text, re.S).group(0)
    for name, value in doc["overall"].items():
        row = re.search(r'<td id="m-%s">.*?</tr>' % re.escape(name), overall, re.S).group(0)
        assert data_values(row)[0] == json.dumps(value), name
    for dim, groups in doc["slices"].items():
        table = re.search(r'<h3 id="slice-%s">.*?</table>' % dim, text, re.S).group(0)
        shown = set(data_values(table))
        assert all(json.dumps(v) in shown for g in groups.values() for v in g.values()), dim
    srcs = re.findall(r'<img class="chart" src="([^"]+)"', text)             # the charts come after the page
    assert len(srcs) == 2 + sum(1 for groups in doc["slices"].values() if len(groups) > 1)
    for src in srcs:
        got = client.get(html.unescape(src))
        assert got.status_code == 200 and got.headers["content-type"].startswith("image/svg+xml"), src
        assert got.text.startswith("<svg ") and got.text == client.get(html.unescape(src)).text


def _case_rows(text: str) -> list:
    body = re.search(r'<table class="cases">.*?<tbody>(.*?)</tbody>', text, re.S).group(1)
    return re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)


def test_cases_filters_and_keyset_paging_walk_every_matching_case_once(client, store):
    from laya_cases.store.warehouse import Warehouse

    con = connect(Warehouse(store), ["demo"])
    expected = con.execute("SELECT row_index, qid FROM cases WHERE language_key = 'en' AND NOT correct "
                           "ORDER BY row_index, qid").fetchall()
    assert len(expected) >= 2
    seen, url = [], "/run/demo/cases?language=en&outcome=incorrect&limit=1"
    while url and len(seen) <= len(expected):
        text = client.get(url).text
        assert 'data-v="%d"' % len(expected) in text        # the count of all matching cases
        for row in _case_rows(text):
            found = re.search(r'row=(\d+)&amp;qid=([^"]+)"', row)
            seen.append((int(found.group(1)), html.unescape(found.group(2))))
        nxt = re.search(r'<a href="([^"]+)">Next page', text)
        url = html.unescape(nxt.group(1)) if nxt else None
    assert seen == expected
    conf = client.get("/run/demo/cases?min_confidence=0.9&max_confidence=1").text
    n = con.execute("SELECT count(*) FROM cases WHERE confidence BETWEEN 0.9 AND 1").fetchone()[0]
    assert 'id="n-matching" data-v="%d"' % n in conf and len(_case_rows(conf)) == n
    tag = client.get("/run/demo/cases?tag=vip&qid=spam").text
    n = con.execute("SELECT count(*) FROM cases WHERE list_contains(tags, 'vip') AND qid = 'spam'").fetchone()[0]
    assert 'id="n-matching" data-v="%d"' % n in tag and n > 0


def test_case_page_shows_state_options_probabilities_and_gold(client, store):
    r = client.get("/run/demo/case?row=1&qid=intent")
    assert r.status_code == 200
    from laya_cases.store.warehouse import Warehouse

    case = connect(Warehouse(store), ["demo"]).execute(
        "SELECT expected_json, options, probabilities FROM cases WHERE row_index = 1 AND qid = 'intent'").fetchone()
    assert html.escape(json.loads(case[0])) in re.search(r'<pre id="gold">(.*?)</pre>', r.text, re.S).group(1)
    options = re.search(r'<table class="options">.*?</table>', r.text, re.S).group(0)
    assert data_values(options) == [repr(p) for p in case[2]]
    assert all(">%s<" % o in options for o in case[1])
    assert client.get("/run/demo/case?row=0&qid=nope").status_code == 400
    assert client.get("/run/demo/case?row=15&qid=intent").status_code == 200


@pytest.mark.slow
def test_compare_page_numbers_equal_diff_json(client, store, tmp_path):
    out = tmp_path / "d.json"
    cli("diff", "demo", "other", "--by", "language", "-w", str(store), "--json", str(out), check=True)
    d = json.loads(out.read_text(encoding="utf-8"))
    text = client.get("/compare?a=demo&b=other&by=language").text
    values = data_values(text)
    for key in ("right_to_wrong", "wrong_to_right", "paired", "accuracy_a", "accuracy_b", "delta", "mcnemar_p"):
        assert json.dumps(d[key]) in values, key
    assert 'data-lo="%r"' % d["ci95"][0] in text and "Flipped cases (%d)" % len(d["flips"]) in text
    for g in d["slices"]["language"].values():
        assert json.dumps(g["delta"]) in values and json.dumps(g["ci95"][1]) in values


FUZZ = [
    "/run/demo%27%20OR%201=1--", "/run/%2e%2e", "/run/..%2f..%2fetc%2fpasswd", "/run/demo%00", "/run/%F0%9F%92%A3",
    "/run/nope", "/run/" + "a" * 600, "/run/demo?x=1", "/run/demo/cases?language=en%27%3B%20DROP%20TABLE%20cases--",
    "/run/demo/cases?qid=intent&qid=spam", "/run/demo/cases?limit=0", "/run/demo/cases?limit=99999999999999999999",
    "/run/demo/cases?limit=-1", "/run/demo/cases?min_confidence=nan", "/run/demo/cases?max_confidence=1e999",
    "/run/demo/cases?min_confidence=0.9&max_confidence=0.1", "/run/demo/cases?after_row=1",
    "/run/demo/cases?after_row=1&after_qid=%00", "/run/demo/cases?after_row=9223372036854775808&after_qid=intent",
    "/run/demo/cases?outcome=maybe", "/run/demo/cases?tag=%3Cscript%3E", "/run/demo/cases?model=%EF%BF%BF",
    "/run/demo/case", "/run/demo/case?row=1", "/run/demo/case?row=1e3&qid=intent", "/run/demo/case?row=%d&qid=intent" % 10 ** 30,
    "/run/demo/case?row=0x10&qid=intent", "/run/demo/case?row=%EF%BC%91&qid=intent", "/run/demo/case?row=1&qid=..%2f..",
    "/compare?a=demo", "/compare?a=demo&b=..%2fother", "/compare?a=demo&b=other&by=language%27--",
    "/compare?a=demo&b=other&by=" + "x" * 5000, "/?q=%00",
    "/run/demo/cases?sort=confidence%3Bdrop", "/run/demo/cases?sort=state", "/run/demo/cases?dir=up",
    "/run/demo/cases?format=xml", "/run/demo/cases?offset=-1", "/run/demo/cases?offset=99999999999",
    "/run/demo/cases?q=%01x", "/run/demo/cases?q=" + "x" * 600, "/run/demo/cases?sort=confidence&q=a&q=b",
    "/run/demo/cases?sort=confidence&after_row=1&after_qid=intent", "/run/demo/cases?offset=2&after_row=1&after_qid=intent",
    "/?sort=nope", "/?format=xml", "/?dir=sideways", "/?sort=run_id&sort=kind",
    "/case?runs=demo&row=1&qid=intent", "/case?runs=demo,other&row=x&qid=intent", "/case?runs=demo,other&row=1&qid=nope",
    "/case?runs=demo,other", "/case?runs=demo,demo&row=1&qid=intent", "/case?runs=demo,other&row=1&qid=intent&x=1",
    "/run/demo?sort=nope", "/run/demo?sort=ece%27--", "/run/demo?dir=up", "/run/demo?format=xml",
    "/run/demo?sort=ece&sort=brier", "/compare?a=demo&b=other&sort=expected_a", "/compare?a=demo&b=other&dir=x",
    "/compare?a=demo&b=other&format=pdf", "/compare/chart/x.svg?runs=demo,other", "/compare/chart/reliability.svg?runs=demo",
    "/compare/chart/reliability.svg?runs=demo,other&by=language", "/run/demo/chart/nope.svg",
    "/run/demo/chart/confidence-colour.svg", "/run/demo/chart/reliability.svg?x=1", "/run/nope/chart/reliability.svg",
]


@pytest.mark.slow
def test_url_fuzzing_gives_400_pages_and_leaves_the_store_unchanged(client, store):
    before = snapshot_tree(store)
    for url in FUZZ:
        r = client.get(url)
        assert r.status_code == 400, (url, r.status_code)
        assert "Traceback" not in r.text and "<script" not in r.text.lower() and 'id="error"' in r.text
    for method in ("post", "put", "delete", "patch"):
        assert getattr(client, method)("/run/demo").status_code == 405
    for url in ("/etc/passwd", "/run/demo/../../warehouse", "/cases/run_id=demo/part-00000.parquet"):
        assert client.get(url).status_code in (400, 404)        # unknown routes: no file is ever served
    assert snapshot_tree(store) == before


def test_the_fuzz_check_can_fail(client):
    """A good URL of each page answers 200 (the 400s above are the parameters' doing)."""
    for url in ("/", "/run/demo", "/run/demo/cases?language=en&outcome=correct&min_confidence=0.1&limit=3",
                "/run/demo/case?row=1&qid=intent", "/compare?a=demo&b=other", "/run/demo/cases?after_row=1&after_qid=intent"):
        assert client.get(url).status_code == 200, url


@pytest.mark.slow
def test_import_laya_cases_and_other_commands_do_not_load_starlette():
    code = ("import sys, laya_cases, laya_cases.views.html, laya_cases.views.serve; from laya_cases_cli import commands; "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')], 'loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT))


def test_the_docs_query_is_the_cases_page(client, store):
    """docs/html.md's plain-DuckDB query returns the rows the cases page shows."""
    import duckdb

    block = re.search(r"```sql\n(.*?)```", (ROOT / "docs" / "html.md").read_text(encoding="utf-8"), re.S).group(1)
    rows = duckdb.connect().execute(block.replace("warehouse/", str(store).replace("'", "''") + "/")).fetchall()
    text = client.get("/run/demo/cases?language=en&outcome=incorrect").text
    shown = [(int(a), html.unescape(b)) for a, b in re.findall(r'row=(\d+)&amp;qid=([^"]+)"', text)]
    assert len(rows) >= 2 and shown == [(r[0], r[1]) for r in rows]


@pytest.mark.slow   # a real server process
def test_cli_serve_listens_on_localhost_and_answers(store):
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "laya_cases_cli", "serve", "-w", str(store), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    pages: list = []

    def served() -> bool:
        try:
            pages.append(urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=2).read().decode("utf-8"))
            return True
        except OSError:
            return False
    try:
        wait_for(served, proc, "the server's first page")
        assert 'href="/run/demo"' in pages[-1]
    finally:
        proc.terminate()
        proc.wait(10)
    assert cli("serve", "-w", str(store), "--port", "0").returncode == 2


@pytest.mark.slow
def test_every_page_escapes_stored_values(tmp_path):
    from urllib.parse import urlencode

    from starlette.testclient import TestClient

    from helpers import record_to_row, write_jsonl
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.views.serve import create_app
    from laya_cases.store.warehouse import Warehouse

    evil = '<script>alert("x")</script>&\'"'
    rows = [record_to_row(i, {"qid": evil, "qtype": "choice", "gold": evil, "pred": "b" if i % 2 else evil,
                              "answer_confidence": 0.5 + i / 10, "language": evil, "tags": [evil], "model": evil})
            for i in range(4)]
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(write_jsonl(tmp_path / "evil.jsonl", rows)), run_id="evil")
    ingest(wh, str(write_jsonl(tmp_path / "evil2.jsonl", rows[::-1])), run_id="evil2")
    client = TestClient(create_app(wh), raise_server_exceptions=False)
    urls = ["/", "/run/evil", "/run/evil/cases?" + urlencode({"language": evil, "qid": evil, "tag": evil}),
            "/run/evil/case?" + urlencode({"row": 1, "qid": evil}), "/compare?a=evil&b=evil2&by=language",
            "/run/evil/cases?" + urlencode({"language": evil + "x"})]
    statuses = []
    for url in urls:
        r = client.get(url)
        statuses.append(r.status_code)
        assert "<script" not in r.text.lower(), url
    assert statuses == [200, 200, 200, 200, 200, 400]
    assert "alert(&quot;x&quot;)" in client.get(urls[2]).text


def test_without_starlette_serve_is_one_usage_line(monkeypatch, store):
    from laya_cases.core.errors import UsageError
    from laya_cases.views.serve import create_app

    monkeypatch.setitem(sys.modules, "starlette", None)        # as if the serve extra were not installed
    with pytest.raises(UsageError, match=r"pip install -e '%s\[serve\]'" % re.escape(str(ROOT))):
        create_app(store)


def test_serve_without_the_extra_announces_nothing(monkeypatch, store):
    """The extra is checked before the "serving ... on http://..." line: a user never sees a server that is not."""
    from typer.testing import CliRunner

    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app

    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(app, ["serve", "-w", str(store)])
    assert result.exit_code == 2 and "serving" not in result.output
    assert "bash scripts/setup.sh dev" in result.output


def _page_keys(client, url: str) -> list:
    """(row, qid) of every case a cases URL lists, following its Next links."""
    seen = []
    while url:
        text = client.get(url).text
        for row in _case_rows(text):
            found = re.search(r'row=(\d+)&amp;qid=([^"]+)"', row)
            seen.append((int(found.group(1)), html.unescape(found.group(2))))
        nxt = re.search(r'<a href="([^"]+)">Next page', text)
        url = html.unescape(nxt.group(1)) if nxt else None
    return seen


def test_sort_search_and_take_away_equal_an_independent_reading(client, store):
    """?sort/dir (every order walked by offset pages of 7) against Python's sort of the `sql` rows;
    ?q against a substring test of each case's state (from the dataset file), gold, prediction and answer;
    ?format=csv|json holding the page's rows, the same numbers as `sql`."""
    from laya_cases.store.warehouse import Warehouse

    con = connect(Warehouse(store), ["demo"])
    rows = [dict(zip(("row_index", "qid", "confidence", "predicted", "language_key", "expected_json", "answer_json"), r))
            for r in con.execute("SELECT row_index, qid, confidence, predicted, language_key, expected_json, "
                                 "answer_json FROM cases").fetchall()]
    key_of = {"confidence": "confidence", "predicted": "predicted", "qid": "qid", "language": "language_key"}
    for sort, column in key_of.items():
        for desc in (False, True):
            present = sorted((r for r in rows if r[column] is not None), key=lambda r: (r["row_index"], r["qid"]))
            present = sorted(present, key=lambda r: r[column], reverse=desc)     # stable: ties stay in row order
            want = [(r["row_index"], r["qid"]) for r in present]
            want += sorted((r["row_index"], r["qid"]) for r in rows if r[column] is None)
            got = _page_keys(client, "/run/demo/cases?sort=%s&dir=%s&limit=7" % (sort, "desc" if desc else "asc"))
            assert got == want, (sort, desc)
    states = [json.loads(l)["state"] for l in (ROOT / "data" / "support.jsonl").read_text().splitlines() if l.strip()]
    for word in ("Parcel", "refund", "zzz-nothing"):
        want = sorted((r["row_index"], r["qid"]) for r in rows if any(
            word.lower() in (t or "").lower() for t in (states[r["row_index"]], r["expected_json"], r["predicted"],
                                                         r["answer_json"])))
        assert _page_keys(client, "/run/demo/cases?q=%s&limit=500" % word) == want, word
    page = client.get("/run/demo/cases?sort=confidence&dir=desc&limit=9&offset=3&format=json")
    assert page.status_code == 200 and page.headers["content-type"].startswith("application/json")
    doc = json.loads(page.text)
    top = sorted((r for r in rows if r["confidence"] is not None), key=lambda r: (r["row_index"], r["qid"]))
    top = sorted(top, key=lambda r: r["confidence"], reverse=True)[3:12]
    assert [(r["row_index"], r["qid"], r["confidence"]) for r in doc["rows"]] == [
        (r["row_index"], r["qid"], r["confidence"]) for r in top]
    assert doc["matching"] == len(rows)
    text = client.get("/run/demo/cases?sort=confidence&dir=desc&limit=9&offset=3&format=csv")
    assert text.headers["content-type"].startswith("text/csv") and "content-security-policy" in text.headers
    lines = list(csv.reader(io.StringIO(text.text)))
    assert lines[0][:2] == ["row_index", "qid"] and len(lines) == 10
    assert [float(l[8]) for l in lines[1:]] == [r["confidence"] for r in top]       # exact (repr) numbers


def test_slice_rows_link_to_their_cases(client):
    text = client.get("/run/demo").text
    for dim, key in (("language", "de"), ("qid", "spam"), ("tag", "vip")):
        href = "/run/demo/cases?%s=%s" % (dim, key)
        assert '<a href="%s">%s</a>' % (html.escape(href), key) in text
        page = client.get(href)
        assert page.status_code == 200 and "Cases of run demo (%s=%s)" % (dim, key) in page.text


def test_a_flipped_case_opens_side_by_side_in_both_runs(client, store):
    """The compare page's flipped rows link to /case?runs=A,B: each run's prediction, confidence and
    correctness as `sql` has them, the input once, every option's probability per run."""
    from laya_cases.store.warehouse import Warehouse

    text = client.get("/compare?a=demo&b=other").text
    links = [html.unescape(h) for h in re.findall(r'href="(/case\?runs=demo%2Cother[^"]*)"', text)]
    assert links
    row, qid = re.search(r"row=(\d+)&qid=([^&]+)", links[0]).groups()
    page = client.get(links[0])
    assert page.status_code == 200 and 'id="state"' in page.text and "not stored" not in page.text
    con = connect(Warehouse(store), ["demo", "other"])
    for run in ("demo", "other"):
        predicted, confidence = con.execute("SELECT predicted, confidence FROM cases WHERE run_id = ? AND row_index = ? "
                                            "AND qid = ?", [run, int(row), qid]).fetchone()
        assert html.escape(predicted) in page.text and 'data-v="%r"' % confidence in page.text
    grid = client.get("/compare/cases?runs=demo,other&show=outcome_differs").text
    assert "/case?runs=demo%2Cother&amp;row=" in grid


def test_a_metric_and_a_reliability_bin_link_to_the_cases_behind_them(client, store):
    from laya_cases.store.warehouse import Warehouse

    con = connect(Warehouse(store), ["demo"])
    text = client.get("/run/demo").text
    href = html.unescape(re.search(r'<td id="m-choice_accuracy"><a href="([^"]+)"', text).group(1))
    page = client.get(href).text
    wrong = con.execute("SELECT count(*) FROM cases WHERE answer_type = 'choice' AND NOT correct").fetchone()[0]
    assert 'id="n-matching" data-v="%d"' % wrong in page and wrong > 0
    bins = re.findall(r'<a href="(/run/demo/cases\?min_confidence=[^"]+)">(\d+)</a>', text)
    assert bins
    for href, shown_n in bins:
        lower, upper = (float(v) for v in re.search(r"min_confidence=([^&]+)&amp;max_confidence=([^&]+)", href).groups())
        n = con.execute("SELECT count(*) FROM cases WHERE confidence BETWEEN ? AND ?", [lower, upper]).fetchone()[0]
        page = client.get(html.unescape(href)).text
        assert 'id="n-matching" data-v="%d"' % n in page and n >= int(shown_n)   # edges included on the page


def test_the_runs_list_sorts_and_is_taken_away(client, store):
    from laya_cases.store.warehouse import Warehouse

    con = connect(Warehouse(store))
    want = con.execute("SELECT run_id, n_cases FROM runs ORDER BY run_id DESC").fetchall()
    doc = json.loads(client.get("/?sort=run_id&dir=desc&format=json").text)
    assert [(r["run_id"], r["n_cases"]) for r in doc["runs"]] == want
    text = client.get("/?sort=run_id&dir=desc&format=csv")
    assert text.headers["content-type"].startswith("text/csv")
    assert [row[0] for row in csv.reader(io.StringIO(text.text))][1:] == [r[0] for r in want]
    page = client.get("/?sort=run_id&dir=desc").text
    assert page.index('href="/run/%s"' % want[0][0]) < page.index('href="/run/%s"' % want[-1][0])


@pytest.mark.slow
def test_the_run_page_sorts_its_slices_and_is_taken_away(client, store):
    """`/run/R?sort=&dir=` orders the slice groups; `?format=json` is the page's report and `?format=csv`
    every number of it, one per line; both read against `report --json` here, not through the server."""
    want = report_json(store)
    got = json.loads(client.get("/run/demo?format=json").text)
    assert got["overall"] == want["overall"] and got["slices"] == want["slices"]
    lines = list(csv.DictReader(io.StringIO(client.get("/run/demo?format=csv").text)))
    expected = [("overall", "", m, v) for m, v in sorted(want["overall"].items())]
    expected += [(dim, key, m, v) for dim in sorted(want["slices"]) for key in sorted(want["slices"][dim])
                 for m, v in sorted(want["slices"][dim][key].items())]
    assert [(r["dim"], r["key"], r["metric"]) for r in lines] == [e[:3] for e in expected]
    for r, (_, _, _, value) in zip(lines, expected):
        assert (r["value"] == "" and value is None) or float(r["value"]) == value or (value != value)
    groups = want["slices"]["language"]
    order = sorted(groups, key=lambda k: (-groups[k]["choice_accuracy"], k))
    text = client.get("/run/demo?sort=choice_accuracy&dir=desc").text
    table = re.search(r'<h3 id="slice-language">.*?</table>', text, re.S).group(0)
    assert [m for m in re.findall(r'language=([a-z]+)"', table)] == order
    assert 'href="/run/demo?sort=choice_accuracy&amp;dir=asc#slice-language"' in table      # again: the other way
    assert "<title>Run demo (slices by choice_accuracy, descending)</title>" in text


@pytest.mark.slow
def test_the_two_run_compare_sorts_its_flips_and_is_taken_away(client, store, tmp_path):
    out = tmp_path / "d.json"
    cli("diff", "demo", "other", "-w", str(store), "--json", str(out), check=True)
    flips = json.loads(out.read_text(encoding="utf-8"))["flips"]
    assert len(flips) > 2
    present = [f for f in flips if f["confidence_a"] is not None]
    want = sorted(present, key=lambda f: -f["confidence_a"]) + [f for f in flips if f["confidence_a"] is None]
    keys = [(f["row_index"], f["qid"]) for f in want]
    url = "/compare?a=demo&b=other&sort=confidence_a&dir=desc"
    assert [(f["row_index"], f["qid"]) for f in json.loads(client.get(url + "&format=json").text)["flips"]] == keys
    rows = list(csv.DictReader(io.StringIO(client.get(url + "&format=csv").text)))
    assert [(int(r["row_index"]), r["qid"]) for r in rows] == keys
    assert [r["confidence_a"] for r in rows] == [repr(f["confidence_a"]) for f in want]
    text = client.get(url).text
    table = re.search(r'<table class="flips">.*?</table>', text, re.S).group(0)
    assert [int(r) for r in re.findall(r'<td><a href="/case\?[^"]*">(\d+)</a></td>', table)] == [k[0] for k in keys]
    assert 'sort=confidence_a&amp;dir=asc#flips' in table and "format=csv" in text


def test_two_big_runs_page_comes_first_without_its_interval_then_whole(store, monkeypatch):
    """Above SYNC_CASES cases the compare page is first the diff without its bootstrap interval (drawn on a
    thread meanwhile), saying so and reloading itself; a file waits for the whole diff, and so does the page
    once it is drawn: then it is byte for byte the page of runs below the bound."""
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app, data

    url = "/compare?a=demo&b=other&by=language"
    whole = TestClient(create_app(store)).get(url).text
    monkeypatch.setattr(data, "SYNC_CASES", 0)
    client = TestClient(create_app(store))
    first = client.get(url).text
    assert 'id="drawing"' in first and '<meta http-equiv="refresh" content="3">' in first
    assert "data-lo=" in whole and "data-lo=" not in first
    d = json.loads(client.get(url + "&format=json").text)   # waits for the interval
    assert d["ci95"] is not None and 'data-lo="%r"' % d["ci95"][0] in whole
    values = data_values(first)                              # every other number is the whole diff's
    for key in ("right_to_wrong", "wrong_to_right", "paired", "accuracy_a", "accuracy_b", "delta", "mcnemar_p"):
        assert json.dumps(d[key]) in values, key
    for g in d["slices"]["language"].values():
        assert json.dumps(g["delta"]) in values and json.dumps(g["mcnemar_p"]) in values
    assert "Flipped cases (%d)" % len(d["flips"]) in first
    assert client.get(url).text == whole
    assert 'id="drawing"' not in whole and "http-equiv=\"refresh\"" not in whole
