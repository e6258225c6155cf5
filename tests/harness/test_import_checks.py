"""`import` refuses a harness document that contradicts itself (issue 27 item 10; import_checks.py).

Two document kinds: ours (`export --format harness`: probabilities, item ids, selective_accuracy@50,
input_sha256) and a laya-evals report (S7.7 cases and the reference's report keys only). Both are
made valid from one store, then broken one way at a time -- a case's `correct` against its indices,
a label that is not the option at its index or not an option at all, a probability against the
case's probabilities, a report number against the cases, the summary against the report -- at
several positions: each is one stderr line naming the file, the case or report entry and the field,
exit 2, and no run committed. The valid documents import, and a number within the export's
tolerance (5e-5) is accepted while one just outside it is not.
"""
from __future__ import annotations

import copy
import json
import random
from typing import Any, Callable, Dict, List, Tuple

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from laya_cases.harness.massive import document
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

LANGS = ("en", "de", "fr")
OPTIONS = ["alarm_set", "play_music", "iot_hue_lightchange", "weather_query"]
ADDITIONS = ("item_id", "probabilities", "logits", "temperature_clamped", "temperature_unclamped", "latency_ms")


def _invoke(*args: Any):
    return CliRunner().invoke(app, [str(a) for a in args])


def _seed_cases() -> List[Dict[str, Any]]:
    """3 languages x 8 cases, distinct confidences (no tie at the 50% cut), about half right."""
    rng, cases = random.Random(27), []
    for lang in LANGS:
        for i in range(8):
            gold = rng.randrange(4)
            pred = gold if rng.random() < 0.5 else (gold + 1 + rng.randrange(3)) % 4
            weights = sorted((rng.random() for _ in OPTIONS), reverse=True)
            order = [pred] + [j for j in range(4) if j != pred]
            probs = [0.0] * 4
            for j, w in zip(order, weights):
                probs[j] = w / sum(weights)
            cases.append({"lang": lang, "index": i, "state": {"utterance": "%s %d" % (lang, i)},
                          "instructions": "intent?", "options": OPTIONS, "gold_index": gold, "pred_index": pred,
                          "confidence": probs[pred], "probabilities": probs, "correct": int(gold == pred),
                          "temperature": 0.5, "item_id": "item-%d" % i, "latency_ms": 10.0 + i})
    return cases


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    """{"ours": an exported document, "laya-evals": the same without laya-cases's additions}."""
    tmp = tmp_path_factory.mktemp("docs")
    (tmp / "seed.json").write_text(json.dumps({"config": {"checkpoint": "c"}, "cases": _seed_cases()}))
    res = _invoke("import", tmp / "seed.json", "-w", tmp / "wh", "--run-id", "seed")
    assert res.exit_code == 0, res.stderr
    ours = document.build(Warehouse(tmp / "wh"), "seed")
    theirs = copy.deepcopy(ours)
    theirs.pop("schema")
    for case in theirs["cases"]:
        for key in ADDITIONS:
            case.pop(key)
    for block in theirs["report"].values():
        block.pop("selective_accuracy@50")
        block.pop("seconds")
    bare = copy.deepcopy(theirs)                 # the harness's own cases: no lang, no index (issue 29 item 6)
    for case in bare["cases"]:
        case.pop("lang")
        case.pop("index")
    return {"ours": ours, "laya-evals": theirs, "harness": bare}


def _wrong_case(doc: Dict[str, Any], pos: int) -> int:
    """The index of the pos-th case (0, middle, last) whose prediction is wrong."""
    wrong = [i for i, c in enumerate(doc["cases"]) if c["pred_index"] != c["gold_index"]]
    return wrong[[0, len(wrong) // 2, -1][pos]]


def _case_at(doc: Dict[str, Any], pos: int) -> int:
    return [0, len(doc["cases"]) // 2, len(doc["cases"]) - 1][pos]


def _flip_correct(doc, pos):
    i = _case_at(doc, pos)
    doc["cases"][i]["correct"] = 1 - doc["cases"][i]["correct"]
    return "cases[%d]" % i, "'correct'"


def _all_correct(doc, pos):
    for case in doc["cases"]:
        case["correct"] = 1
    return "cases[%d]" % _wrong_case(doc, 0), "'correct'"


def _pred_not_an_option(doc, pos):
    i = _case_at(doc, pos)
    doc["cases"][i]["pred_label"] = "book_flight"
    return "cases[%d]" % i, "'pred_label': 'book_flight' is not one of the 4 options"


def _pred_other_option(doc, pos):
    i = _wrong_case(doc, pos)
    doc["cases"][i]["pred_label"] = doc["cases"][i]["gold_label"]
    return "cases[%d]" % i, "'pred_label'"


def _gold_other_option(doc, pos):
    i = _wrong_case(doc, pos)
    doc["cases"][i]["gold_label"] = doc["cases"][i]["pred_label"]
    return "cases[%d]" % i, "'gold_label'"


def _probability(doc, pos):
    i = _case_at(doc, pos)
    doc["cases"][i]["probability"] += 0.01
    return "cases[%d]" % i, "'probability'"


def _report_field(field: str, value: Callable[[Any], Any]) -> Callable[[Dict[str, Any], int], Tuple[str, str]]:
    def change(doc, pos):
        lang = LANGS[pos]
        doc["report"][lang][field] = value(doc["report"][lang][field])
        return "report['%s']" % lang, "'%s'" % field
    return change


def _summary(doc, pos):
    key = ("macro_accuracy", "macro_ece", "macro_f1")[pos]
    doc["summary"][key] = round(doc["summary"][key] + 0.01, 4)
    return "summary", "'%s'" % key


CONTRADICTIONS: Dict[str, Callable[[Dict[str, Any], int], Tuple[str, str]]] = {
    "correct_flipped": _flip_correct,
    "pred_not_an_option": _pred_not_an_option,
    "pred_label_not_at_pred_index": _pred_other_option,
    "gold_label_not_at_gold_index": _gold_other_option,
    "accuracy_0.99": _report_field("accuracy", lambda v: 0.99),
    "n": _report_field("n", lambda v: v + 1),
    "macro_f1": _report_field("macro_f1", lambda v: round(v + 0.01, 4)),
    "ece": _report_field("ece", lambda v: round(v - 0.01, 4)),
    "mean_confidence": _report_field("mean_confidence", lambda v: round(v + 0.001, 4)),
    "acc_at_50_coverage": _report_field("acc_at_50_coverage", lambda v: round(1.0 - v, 4) if v != 0.5 else 0.25),
    "input_sha256": _report_field("input_sha256", lambda v: "0" * 64),
    "summary": _summary,
}
OURS_ONLY = {"probability": _probability,
             "selective_accuracy@50": _report_field("selective_accuracy@50", lambda v: round(v + 0.02, 4))}
CASES = ([(kind, name, pos) for kind in ("ours", "laya-evals") for name in CONTRADICTIONS for pos in range(3)]
         + [("ours", name, pos) for name in OURS_ONLY for pos in range(3)]
         + [(kind, "all_correct", 0) for kind in ("ours", "laya-evals")])


def _import(tmp_path, doc):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    res = _invoke("import", path, "-w", tmp_path / "wh", "--run-id", "x")
    return path, res


def test_the_generated_cases_are_many():
    assert len(CASES) >= 20 and len(CASES) == 2 * 12 * 3 + 2 * 3 + 2


@pytest.mark.parametrize("kind, name, pos", [c if c[2] == 0 else pytest.param(*c, marks=pytest.mark.slow)   # 3 places each
                                             for c in CASES])
def test_a_contradiction_is_one_line_exit_2_and_nothing_committed(tmp_path, documents, kind, name, pos):
    doc = copy.deepcopy(documents[kind])
    change = {**CONTRADICTIONS, **OURS_ONLY, "all_correct": _all_correct}[name]
    where, field = change(doc, pos)
    path, res = _import(tmp_path, doc)
    assert res.exit_code == 2, (res.exit_code, res.stdout)
    line = res.stderr
    assert line.startswith("laya-cases: %s %s" % (path, where)) and field in line, line
    assert line.count("\n") == 1 and "Traceback" not in line
    assert Warehouse(tmp_path / "wh").run_ids() == []


@pytest.mark.parametrize("kind", ["ours", "laya-evals", pytest.param("harness", marks=pytest.mark.slow)])
def test_the_valid_documents_import_and_give_their_report_back(tmp_path, documents, kind):
    path, res = _import(tmp_path, documents[kind])
    assert res.exit_code == 0, res.stderr
    again = document.build(Warehouse(tmp_path / "wh"), "x")
    drop = lambda d: {k: v for k, v in d.items() if k != "seconds"}      # noqa: E731  (latency: ours only)
    assert drop(again["summary"]) == drop(documents["ours"]["summary"])
    for lang, block in documents[kind]["report"].items():
        assert {k: again["report"][lang][k] for k in drop(block)} == drop(block)


@pytest.mark.slow
def test_cases_without_lang_take_it_from_the_report_order(tmp_path, documents):
    """lang and index come from the report's languages, n cases each, in document order; the stored rows
    carry them (the harness export gives them back), and a report whose counts do not cover the cases
    is one line, exit 2."""
    path, res = _import(tmp_path, documents["harness"])
    assert res.exit_code == 0, res.stderr
    back = document.build(Warehouse(tmp_path / "wh"), "x")["cases"]
    assert [(c["lang"], c["index"]) for c in back] == [(c["lang"], c["index"]) for c in documents["ours"]["cases"]]
    doc = copy.deepcopy(documents["harness"])
    doc["report"]["de"]["n"] += 1
    (tmp_path / "bad").mkdir()
    path, res = _import(tmp_path / "bad", doc)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "%s cases:" % path in res.stderr and "25 cases, not the document's 24" in res.stderr, res.stderr


@pytest.mark.parametrize("offset, ok", [(4e-5, True), (-4e-5, True), (6e-5, False), (-6e-5, False)])
def test_the_tolerance_is_the_exports(tmp_path, documents, offset, ok):
    doc = copy.deepcopy(documents["laya-evals"])
    en = [c["correct"] for c in doc["cases"] if c["lang"] == "en"]
    doc["report"]["en"]["accuracy"] = sum(en) / len(en) + offset
    _path, res = _import(tmp_path, doc)
    assert (res.exit_code == 0) == ok, res.stderr
    assert ok or "report['en'] field 'accuracy'" in res.stderr
