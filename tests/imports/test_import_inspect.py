"""issue 31 item 4: inspect_ai logs become runs (docs/imports.md, "inspect").

Fixtures: real inspect_ai 0.3.285 logs (tests/fixtures/imports/inspect/README.md) of a SIB-200 multiple
choice task, 2 epochs, answered by inspect's mockllm: one without logprobs (.eval, and a short .json),
one with top_logprobs at the answer token (.eval). `.eval` logs are read only through inspect's own API:
those tests run where inspect_ai is installed (the optional extra `inspect`, part of `dev`) and skip
elsewhere. The `.json` log is read both through inspect_ai and without it, and the refusal of a `.eval`
log without it is checked by hiding inspect_ai from the import system.
"""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT
from laya_cases.api import Store
from laya_cases.imports import detect, import_path
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

LOGS = ROOT / "tests" / "fixtures" / "imports" / "inspect"
JSON_LOG, HARD, LOGPROBS = LOGS / "sib200-hard-8.json", LOGS / "sib200-hard.eval", LOGS / "sib200-logprobs.eval"
#: Looked up, not imported: inspect_ai is 1,400 modules, and every xdist worker collects this file.
HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None
needs_inspect = pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai not installed (pip install -e '.[inspect]')")


def _log(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _without_inspect(monkeypatch) -> None:
    """As where the `inspect` extra is not installed: importing inspect_ai fails."""
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["inspect_ai", "plain json"])
def test_json_log_imports_as_hard_decisions_with_inspects_accuracy(tmp_path, monkeypatch, reader):
    if reader == "plain json":
        _without_inspect(monkeypatch)          # a .json log is read without inspect_ai too
    elif not HAS_INSPECT:
        pytest.skip("inspect_ai not installed (pip install -e '.[inspect]')")
    wh = tmp_path / "wh"
    assert detect(str(JSON_LOG)) == "inspect"
    res = CliRunner().invoke(app, ["import", str(JSON_LOG), "--run-id", "h", "-w", str(wh)])
    assert res.exit_code == 0, res.output
    assert "calibration unavailable" in res.output
    log = _log(JSON_LOG)
    store = Store(wh)
    report = store.report("h")
    assert report["overall"]["choice_accuracy"] == pytest.approx(
        log["results"]["scores"][0]["metrics"]["accuracy"]["value"], abs=1e-12)
    assert "ece" not in report["overall"] and report["extensions"]["overall"]["ece"]["reason"] == "no_applicable_case"
    cases = store.cases("h")
    assert cases.height == len(log["samples"]) == 16
    assert cases["confidence"].is_null().all()
    # every epoch repeats an item: the second is numbered `#2` and joins the same item in a diff
    assert sum(1 for c in cases["case_id"] if c.endswith("#2")) == 8
    per = {(s["id"], s["epoch"]): s["scores"]["choice"]["value"] == "C" for s in log["samples"]}
    got = {(r["item_id"], int(r["tags"][0].split("=")[1])): r["correct"] for r in cases.iter_rows(named=True)}
    assert got == per
    shown = CliRunner().invoke(app, ["report", "h", "-w", str(wh)])
    assert "note: calibration unavailable" in shown.output and "ece" not in shown.stdout


def test_eval_log_without_inspect_names_the_extra(tmp_path, monkeypatch):
    _without_inspect(monkeypatch)
    res = CliRunner().invoke(app, ["import", str(HARD), "-w", str(tmp_path / "wh")])
    assert res.exit_code == 2 and "needs inspect_ai: pip install -e" in res.output and "[inspect]" in res.output
    assert not (tmp_path / "wh").exists() or not Warehouse(tmp_path / "wh").run_ids()


@needs_inspect
def test_eval_logs_accuracy_flips_and_calibration_only_with_logprobs(tmp_path):
    from inspect_ai.log import read_eval_log

    wh = Warehouse(tmp_path / "wh")
    [hard] = import_path(wh, str(HARD), run_id="hard")
    [soft] = import_path(wh, str(LOGPROBS), run_id="soft")
    assert hard.notes and "calibration unavailable" in hard.notes[0] and not soft.notes
    store = Store(wh.root)
    for run, path in (("hard", HARD), ("soft", LOGPROBS)):
        log = read_eval_log(str(path))
        assert store.report(run)["overall"]["choice_accuracy"] == pytest.approx(
            log.results.scores[0].metrics["accuracy"].value, abs=1e-12)
    assert "ece" not in store.report("hard")["overall"] and "ece" in store.report("soft")["overall"]
    soft_cases = store.cases("soft")
    assert (soft_cases["confidence"] == soft_cases["probabilities"].list.max()).all()
    diff = store.diff("hard", "soft", bootstrap=200)
    assert diff["right_to_wrong"] + diff["wrong_to_right"] > 0 and 0 < diff["mcnemar_p"] <= 1
    again = import_path(wh, str(HARD))
    assert again[0].existing and again[0].run_id == "hard"
