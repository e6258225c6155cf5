"""issue 13 acceptance in a real browser: headless Chromium (Debian's `chromium`, driven by Playwright
with executable_path, no browser download) follows runs -> run -> cases (filtered) -> case -> compare
on `laya-cases serve`, checks the numbers shown against `report --json` / `diff --json`, and opens the
`report --html` file with the network blocked. A screenshot of each page is kept in the test's tmp
dir (printed). Without a browser the tests skip with the install line."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from inprocess import cli
from test_html_report import make_store
from laya_cases.query.sql import connect

CHROMIUM = os.environ.get("LAYA_CASES_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
INSTALL = "no headless browser: apt-get install chromium chromium-driver && pip install playwright"
#: Looked up, not imported (every xdist worker collects this file; one runs it).
HAVE = CHROMIUM is not None and all(importlib.util.find_spec(m) for m in ("playwright", "starlette", "uvicorn"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE, reason=INSTALL)]   # slow: headless Chromium


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def server(store):
    """`laya-cases serve` on a free port, in a thread; yields its base URL."""
    import uvicorn

    from laya_cases.views.serve import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listening = threading.Event()

    class Server(uvicorn.Server):
        async def startup(self, sockets=None):
            await super().startup(sockets)
            listening.set()

    srv = Server(uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    assert listening.wait(10) and srv.started, "laya-cases serve did not start"
    yield "http://127.0.0.1:%d" % port
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def shown(value) -> str:
    return ("%.4f" % value) if isinstance(value, float) else str(value)


def check_overall(page, doc) -> None:
    """Every overall number of the report JSON is in its row: rounded on screen, exact in data-v."""
    for name, value in doc["overall"].items():
        cell = page.locator("table.overall tr", has=page.locator('td[id="m-%s"]' % name)).locator("td.n").first
        assert cell.get_attribute("data-v") == json.dumps(value), name
        assert cell.inner_text().strip() == shown(value), name


def test_browser_walks_runs_run_cases_case_compare(server, store, browser, tmp_path):
    shots = tmp_path / "screens"
    shots.mkdir()
    doc = json.loads(cli("report", "demo", "-w", str(store), "--json", "-", "--no-cases", check=True).stdout)
    diff_path = tmp_path / "diff.json"
    cli("diff", "demo", "other", "--by", "language", "-w", str(store), "--json", str(diff_path), check=True)
    d = json.loads(diff_path.read_text(encoding="utf-8"))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server + "/")
    page.screenshot(path=str(shots / "1-runs.png"), full_page=True)
    page.click('a[href="/run/demo"]')
    assert page.url.endswith("/run/demo")
    check_overall(page, doc)
    page.screenshot(path=str(shots / "2-run.png"), full_page=True)
    page.click("text=Browse the cases")
    page.select_option('select[name="language"]', "en")
    page.select_option('select[name="outcome"]', "incorrect")
    page.click('button:has-text("Filter")')
    page.wait_for_url("**/cases?**")
    assert "language=en" in page.url and "outcome=incorrect" in page.url
    from laya_cases.store.warehouse import Warehouse

    con = connect(Warehouse(store), ["demo"])
    wrong = con.execute("SELECT row_index, qid, confidence FROM cases WHERE language_key = 'en' AND NOT correct "
                        "ORDER BY row_index, qid").fetchall()
    assert page.locator("#n-matching").get_attribute("data-v") == str(len(wrong))
    assert page.locator("table.cases tbody tr").count() == len(wrong)
    page.screenshot(path=str(shots / "3-cases.png"), full_page=True)
    page.locator("table.cases tbody tr a").first.click()
    assert "row=%d" % wrong[0][0] in page.url
    gold = con.execute("SELECT expected_json FROM cases WHERE row_index = $r AND qid = $q",
                       {"r": wrong[0][0], "q": wrong[0][1]}).fetchone()[0]
    assert page.locator("#gold").inner_text().strip() == json.dumps(json.loads(gold))
    assert page.locator("table.case td.n", has_text=shown(wrong[0][2])).count() >= 1
    page.screenshot(path=str(shots / "4-case.png"), full_page=True)
    page.goto(server + "/")
    page.select_option('select[name="a"]', "demo")
    page.select_option('select[name="b"]', "other")
    page.select_option('select[name="by"]', "language")
    page.click('button:has-text("Compare")')
    page.wait_for_url("**/compare?**", timeout=60000)
    assert "/compare?" in page.url
    values = page.locator("table.diff-summary td.n").evaluate_all("cells => cells.map(c => c.dataset.v)")
    for key in ("right_to_wrong", "wrong_to_right", "paired", "accuracy_a", "accuracy_b", "delta", "mcnemar_p"):
        assert json.dumps(d[key]) in values, key
    assert page.locator("table.flips tbody tr").count() == len(d["flips"])
    page.screenshot(path=str(shots / "5-compare.png"), full_page=True)
    page.close()
    assert sorted(p.name for p in shots.iterdir()) == ["1-runs.png", "2-run.png", "3-cases.png", "4-case.png",
                                                       "5-compare.png"]
    print("screenshots: %s" % shots)


def test_html_report_opens_offline_and_shows_every_overall_number(store, browser, tmp_path):
    out, js = tmp_path / "report.html", tmp_path / "report.json"
    cli("report", "demo", "-w", str(store), "--html", str(out), "--json", str(js), "--bootstrap", "200", check=True)
    doc = json.loads(js.read_text(encoding="utf-8"))
    context = browser.new_context(offline=True)
    requests = []
    context.route("**/*", lambda route: (requests.append(route.request.url),
                                         route.continue_() if route.request.url.startswith("file://")
                                         else route.abort()))
    page = context.new_page()
    page.goto(out.as_uri())
    check_overall(page, doc)
    for name, entry in doc["extensions"]["overall"].items():
        ci = entry.get("ci") if isinstance(entry, dict) else None
        if ci:
            row = page.locator("table.overall tr", has=page.locator('td[id="m-%s"]' % name)).locator("td.n")
            assert row.nth(1).inner_text().strip() == shown(ci["lower"])
    assert page.locator("svg.chart").count() == 2 + sum(1 for groups in doc["slices"].values() if len(groups) > 1)
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert requests == [out.as_uri()]                      # the file itself, nothing else
    context.close()
