"""`diff A B --reruns R,R,...`: the delta read against rerun noise (sql/stability/summary.sql `delta_noise`,
report/diff.py `rerun_noise`), checked against the reruns' own decisions with plain Python: per compared
case p = the share of runs right, band = 1.96 sqrt(2 sum p(1-p)) / compared, overall and per language."""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from helpers import ROOT, snapshot_tree
from test_bad_input import run_cli

pytestmark = pytest.mark.slow          # three ingests and a few diffs

DATA = ROOT / "data"


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    base = tmp_path_factory.mktemp("reruns")
    wh = str(base / "wh")
    for name, path in (("minilm", "support.minilm.answers.jsonl"), ("int8", "support.int8.answers.jsonl"),
                       ("recorded", "support.answers.jsonl"), ("planted", "support.planted.answers.jsonl")):
        code, _, err = run_cli("ingest", DATA / path, "--run-id", name, "-w", wh)
        assert code == 0, err
    return wh


def _bands(wh, runs):
    """{group: band} from the runs' decisions: choice and noul cases scored by two or more runs."""
    code, out, err = run_cli("sql", "SELECT case_id, run_id, correct, language_key AS language FROM decisions WHERE correct IS NOT NULL "
                             "AND answer_type IN ('choice', 'noul') AND error IS NULL", "--format", "json", "-w", wh)
    assert code == 0, err
    by_case = defaultdict(list)
    language = {}
    for r in json.loads(out):
        if r["run_id"] in runs:
            by_case[r["case_id"]].append(r["correct"])
            language[r["case_id"]] = r["language"]
    groups = defaultdict(list)
    for case, rights in by_case.items():
        if len(rights) >= 2:
            p = sum(rights) / len(rights)
            groups["overall"].append(p)
            if language[case] is not None:
                groups[language[case]].append(p)
    return {g: 1.96 * math.sqrt(2 * math.fsum(p * (1 - p) for p in ps)) / len(ps) for g, ps in groups.items()}


def test_the_band_and_the_verdict_match_the_decisions(wh, tmp_path):
    reruns = ["minilm", "int8", "recorded"]
    code, _, err = run_cli("diff", "minilm", "int8", "--by", "language", "--reruns", ",".join(reruns),
                           "--json", tmp_path / "d.json", "-w", wh)
    assert code == 0, err
    d = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    want = _bands(wh, reruns)
    noise = d["rerun_noise"]
    assert noise["runs"] == reruns
    assert math.isclose(noise["overall"]["band"], want["overall"], rel_tol=1e-12)
    assert noise["overall"]["within"] == (abs(d["delta"]) <= noise["overall"]["band"])
    assert set(noise["slices"]["language"]) == set(d["slices"]["language"])
    for key, g in noise["slices"]["language"].items():
        assert math.isclose(g["band"], want[key], rel_tol=1e-12), key
        assert g["within"] == (abs(d["slices"]["language"][key]["delta"]) <= g["band"])


def test_the_terminal_markdown_and_html_say_it(wh, tmp_path):
    code, out, err = run_cli("diff", "minilm", "int8", "--reruns", "minilm,int8,recorded", "--markdown",
                             tmp_path / "d.md", "--html", tmp_path / "d.html", "-w", wh)
    assert code == 0, err
    line = next(l for l in out.splitlines() if l.startswith("rerun noise"))
    assert "3 reruns (minilm, int8, recorded)" in line and ("within it" in line or "beyond it" in line)
    assert "| rerun noise (95%, 3 reruns) |" in (tmp_path / "d.md").read_text(encoding="utf-8")
    assert "delta within rerun noise" in (tmp_path / "d.html").read_text(encoding="utf-8")


def test_refusals_leave_the_store_alone(wh):
    before = snapshot_tree(Path(wh))
    for argv, needle in ((["--reruns", "minilm"], "2 to"), (["--reruns", "minilm,nope"], "nope"),
                         (["--reruns", "int8,int8"], "int8"), (["--reruns", "recorded,planted"], "planted")):
        code, _, err = run_cli("diff", "minilm", "int8", *argv, "-w", wh)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert snapshot_tree(Path(wh)) == before
