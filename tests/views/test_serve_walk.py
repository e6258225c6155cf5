"""Issue 32's walk in a real browser (headless Chromium through Playwright, as tests/views/test_html_browser.py):
runs -> run -> a slice row -> its cases sorted by confidence, searched by a word of the input -> a case showing
its input -> the same case side by side in a second run -> a 3-run compare's case grid filtered to
"prediction differs" -> the CSV of that page. The numbers are checked against `report --json` / `laya-cases sql`
on the way, every page is checked not to scroll sideways in a 760 px window, and a screenshot of each step is
kept under the test's tmp dir (printed). Without a browser the test skips with the install line."""
from __future__ import annotations

import csv
import io
import json
import urllib.request

import pytest

from helpers import cli, flipped_support_answers
from test_html_browser import HAVE, INSTALL, browser, server  # noqa: F401  (fixtures: this module's store)
from test_html_report import make_store
from laya_cases.query.sql import connect
from laya_cases.store.warehouse import Warehouse

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE, reason=INSTALL)]

WIDTH = 760


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """demo and other (test_html_report.make_store) and a third run of the same dataset, `third`: the
    flipped answers flipped once more."""
    from laya_cases.record.ingest.answers import ingest

    base = tmp_path_factory.mktemp("walk")
    root = make_store(base)
    third = flipped_support_answers(base / "third.answers.jsonl")
    rows = [json.loads(l) for l in third.read_text(encoding="utf-8").splitlines()]
    for i, row in enumerate(rows):
        for answer in row["answers"].values():
            if answer.get("type") == "choice" and i % 4 == 1:
                options = sorted(answer.get("probabilities") or [answer["choice"]])
                answer["choice"] = options[-1]
    third.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ingest(Warehouse(root), str(third), run_id="third")
    return root


def _no_sideways_scroll(page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= WIDTH, "%s scrolls sideways: %d px wide" % (page.url, width)


def _charts_drawn(page, n: int) -> None:
    """The page's n chart images arrived and were drawn (not blocked by its CSP, not broken)."""
    charts = page.locator("img.chart")
    assert charts.count() == n
    page.wait_for_function("() => [...document.querySelectorAll('img.chart')].every(i => i.complete)")
    assert charts.evaluate_all("c => c.map(i => i.naturalWidth > 200)") == [True] * n


def test_walk_from_the_runs_to_the_csv_of_a_three_run_grid(server, store, browser, tmp_path):  # noqa: F811
    shots = tmp_path / "screens"
    shots.mkdir()
    con = connect(Warehouse(store), ["demo", "other", "third"])
    doc = json.loads(cli("report", "demo", "-w", str(store), "--json", "-", "--no-cases", check=True).stdout)
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})

    def step(name: str) -> None:
        _no_sideways_scroll(page)
        page.screenshot(path=str(shots / ("%s.png" % name)), full_page=True)

    page.goto(server + "/")
    step("1-runs")
    page.click('a[href="/run/demo"]')
    assert page.title() == "Run demo"
    _charts_drawn(page, 2 + sum(1 for groups in doc["slices"].values() if len(groups) > 1))
    step("2-run")
    page.click('table.slice a[href="/run/demo/cases?language=en"]')              # a slice row -> its cases
    n_en = con.execute("SELECT count(*) FROM cases WHERE run_id = 'demo' AND language_key = 'en'").fetchone()[0]
    assert page.locator("#n-matching").get_attribute("data-v") == str(n_en) == str(doc["extensions"]["slices"]
                                                                                  ["language"]["en"]["n_cases"])
    page.click('table.cases th a:has-text("confidence")')                          # sorted by confidence
    assert "sort=confidence" in page.url
    shown = page.locator("table.cases tbody tr td.n[data-v]").evaluate_all("c => c.map(x => x.dataset.v)")
    confidences = [float(v) for v in shown if "." in v]
    assert confidences == sorted(confidences)
    page.fill('input[name="q"]', "parcel")                                          # a word of the input
    page.click('button:has-text("Filter")')
    page.wait_for_url("**q=parcel**")
    want = con.execute("SELECT c.row_index, c.qid, c.confidence FROM cases c JOIN runs r USING (run_id) JOIN inputs i "
                       "ON i.labelled_rows_sha256 = r.labelled_rows_sha256 AND i.row_index = c.row_index "
                       "WHERE c.run_id = 'demo' AND c.language_key = 'en' "
                       "AND contains(lower(json_extract_string(i.row_json, '$.state')), 'parcel') "
                       "ORDER BY c.confidence NULLS LAST, c.row_index, c.qid").fetchall()
    assert want and page.locator("#n-matching").get_attribute("data-v") == str(len(want))
    step("3-cases-sorted-searched")
    page.locator("table.cases tbody tr a").first.click()                           # a case, with its input
    row, qid = want[0][0], want[0][1]
    assert "row=%d" % row in page.url
    state = con.execute("SELECT json_extract_string(i.row_json, '$.state') FROM inputs i WHERE row_index = ?",
                        [row]).fetchone()[0]
    assert page.locator("#state").inner_text().strip() == state
    step("4-case-input")
    page.goto(server + "/case?runs=demo,other&row=%d&qid=%s" % (row, qid))         # the same case in a second run
    for run in ("demo", "other"):
        predicted = con.execute("SELECT predicted FROM cases WHERE run_id = ? AND row_index = ? AND qid = ?",
                                [run, row, qid]).fetchone()[0]
        assert page.locator("table.side").inner_text().count(predicted) >= 1
    assert page.locator("#state").inner_text().strip() == state
    step("5-side-by-side")
    page.goto(server + "/compare?runs=demo,other,third")                           # three runs
    _charts_drawn(page, 2)
    step("6-compare-3")
    page.click('a:has-text("prediction differs")')
    differs = con.execute("SELECT count(*) FROM (SELECT case_id FROM cases GROUP BY case_id "
                          "HAVING count(DISTINCT predicted) > 1)").fetchone()[0]
    assert page.locator("#n-matching").get_attribute("data-v") == str(differs) and differs > 0
    step("7-grid-prediction-differs")
    href = page.locator('a:has-text("csv")').first.get_attribute("href")
    with urllib.request.urlopen(server + href.replace("&amp;", "&")) as response:
        rows = list(csv.DictReader(io.StringIO(response.read().decode("utf-8"))))
    assert len(rows) == min(differs, 50)
    for r in rows:
        got = {run: r["%s.predicted" % run] for run in ("demo", "other", "third")}
        for run, value in got.items():
            stored = con.execute("SELECT predicted FROM cases WHERE run_id = ? AND row_index = ? AND qid = ?",
                                 [run, int(r["row_index"]), r["qid"]]).fetchone()[0]
            assert value == (stored or "")
        assert len(set(got.values())) > 1
    page.close()
    assert len(list(shots.iterdir())) == 7
    print("screenshots: %s" % shots)
