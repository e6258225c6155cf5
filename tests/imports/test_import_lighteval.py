"""issue 31 item 2: lighteval `--save-details` output becomes runs (docs/imports.md, "lighteval").

The fixtures are real lighteval 0.13 details of two randomly initialised GPT-2s over the same docs
(tests/fixtures/imports/lighteval/README.md): BANKING77 as 4-option multiple choice, SIB-200 in three
parallel languages (doc.specific.language), and a generative BANKING77 task. Every expectation below is
read from the Parquet files with pyarrow and numpy (lighteval's own per-doc metrics and logprobs), never
through the import or its SQL.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases.api import Store
from laya_cases.imports import detect, import_path
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

OUT = ROOT / "tests" / "fixtures" / "imports" / "lighteval" / "out"
SEED1, SEED2 = (next((OUT / "details" / "models" / ("gpt2-random-seed%d" % s)).iterdir()) for s in (1, 2))
LANGS = ("deu_Latn", "eng_Latn", "fra_Latn")
EDGES = [i / 15 for i in range(16)]


def _details(folder: Path):
    """(task without few-shot, doc id) -> the row as lighteval wrote it (pyarrow, not our SQL)."""
    out = {}
    for path in sorted(folder.glob("details_*.parquet")):
        for row in pq.read_table(path).to_pylist():
            out[(row["doc"]["task_name"].split("|")[0], row["doc"]["id"])] = row
    return out


def _results(folder: Path):
    model = folder.parent.name
    return json.loads(next((OUT / "results" / "models" / model).glob("results_*.json")).read_text(encoding="utf-8"))


def _choice_rows(folder: Path):
    return {k: r for k, r in _details(folder).items() if "LOGPROBS" in r["doc"]["sampling_methods"]}


def _tied(row):
    lls = row["model_response"]["logprobs"][:len(row["doc"]["choices"])]
    return lls.count(max(lls)) > 1


def _softmax(lls):
    x = np.asarray(lls, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.fixture(scope="module")            # about 1 s on the shared machine: its users are marked slow
def imported(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("lighteval") / "wh")
    return wh, import_path(wh, str(OUT), run_id="le")


def _cases(wh, run):
    return Store(wh.root).sql("SELECT tags[1] AS task, item_id, qid, language, question_type, correct, confidence, "
                              "probabilities, logits, predicted, options FROM cases WHERE run_id = '%s'" % run).to_dicts()


def _lang(case):
    """The cases view keeps a language as its JSON text."""
    return None if case["language"] is None else json.loads(case["language"])


def _key(case):
    return case["task"].split("|")[0], case["item_id"]


def test_detect_names_lighteval_from_its_files():
    assert detect(str(OUT)) == "lighteval"              # beside lighteval's results_<date>.json, not lm-eval
    assert detect(str(SEED1)) == "lighteval"
    assert detect(str(next(SEED1.glob("details_*.parquet")))) == "lighteval"


@pytest.mark.slow
def test_one_run_per_details_folder_every_doc_a_case(imported):
    wh, results = imported
    assert [r.run_id for r in results] == ["le-1", "le-2"] and not any(r.existing for r in results)
    for result, folder in zip(results, (SEED1, SEED2)):
        assert result.n_cases == len(_details(folder)) == 40 + 40 + 3 * 20


@pytest.mark.slow
@pytest.mark.parametrize("norm,metric", [("raw", "acc"), ("chars", "acc_norm")])
def test_correct_is_lightevals_own_metric_for_every_untied_doc(tmp_path, norm, metric):
    wh = Warehouse(tmp_path / "wh")
    [run] = import_path(wh, str(SEED1), norm=norm)
    logged = _details(SEED1)
    compared = 0
    for case in _cases(wh, run.run_id):
        row = logged[_key(case)]
        if case["question_type"] == "choice" and not _tied(row):
            assert float(case["correct"]) == row["metric"][metric], _key(case)
            compared += 1
    assert compared >= 90                          # not vacuous: nearly all 100 multiple-choice docs


def test_the_two_norms_differ_on_these_files():
    """acc and acc_norm disagree on some docs here, so the test above checks two different rules."""
    assert any(r["metric"]["acc"] != r["metric"]["acc_norm"] for r in _choice_rows(SEED1).values())


@pytest.mark.slow
def test_probabilities_are_softmax_of_logprobs_and_p_gold_is_normalized_mc_prob(imported):
    wh, _ = imported
    logged = _details(SEED1)
    seen = 0
    for case in _cases(wh, "le-1"):
        if case["question_type"] != "choice":
            continue
        row = logged[_key(case)]
        lls = row["model_response"]["logprobs"]
        assert case["logits"] == lls
        probs = _softmax(lls)
        assert case["probabilities"] == pytest.approx(list(probs), rel=1e-12, abs=1e-15)
        assert case["confidence"] == max(case["probabilities"])
        assert case["probabilities"][row["doc"]["gold_index"]] == pytest.approx(row["metric"]["normalized_mc_prob"],
                                                                                 rel=1e-9)
        assert case["options"] == [c.strip() for c in row["doc"]["choices"]]
        seen += 1
    assert seen == 100


def _ece(conf, correct):
    conf, correct = np.asarray(conf), np.asarray(correct, dtype=float)
    bins = np.array([sum(1 for e in EDGES[1:15] if c > e) for c in conf])
    total = 0.0
    for b in range(15):
        m = bins == b
        if m.any():
            total += m.sum() / len(conf) * abs(conf[m].mean() - correct[m].mean())
    return total


@pytest.mark.slow
def test_report_json_numbers_rederived_with_numpy_from_the_parquet(imported, tmp_path):
    wh, _ = imported
    out = tmp_path / "report.json"
    res = CliRunner().invoke(app, ["report", "le-2", "-w", str(wh.root), "--json", str(out), "--slice", "language"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    report = doc["overall"]
    rows = _details(SEED2)            # seed 2: its SIB-200 accuracies differ by language (seed 1's are all 0)
    conf, correct, em = [], [], []
    for row in rows.values():
        if "LOGPROBS" in row["doc"]["sampling_methods"]:
            p = _softmax(row["model_response"]["logprobs"])
            conf.append(float(p.max()))
            correct.append(float(int(np.argmax(p)) == row["doc"]["gold_index"]))
        else:
            em.append(row["metric"]["em"])
    assert report["choice_accuracy"] == pytest.approx(np.mean(correct), abs=1e-12)
    assert report["noul_accuracy"] == pytest.approx(np.mean(em), abs=1e-12)
    assert report["mean_confidence"] == pytest.approx(np.mean(conf), abs=1e-12)
    assert report["ece"] == pytest.approx(_ece(conf, correct), abs=1e-12)
    assert report["brier"] == pytest.approx(np.mean((np.asarray(conf) - np.asarray(correct)) ** 2), abs=1e-12)
    results = _results(SEED2)["results"]
    assert len({results["sib200_mini_%s|0" % lang]["acc"] for lang in LANGS}) > 1
    for lang in LANGS:                             # a language's accuracy is lighteval's own acc of that task
        assert doc["slices"]["language"][lang]["choice_accuracy"] == pytest.approx(
            results["sib200_mini_%s|0" % lang]["acc"], abs=1e-12)
    text = CliRunner().invoke(app, ["report", "le-2", "-w", str(wh.root)])
    assert text.exit_code == 0 and "choice_accuracy    %.4f" % np.mean(correct) in text.stdout


@pytest.mark.slow
def test_generative_docs_are_noul_without_confidence(imported):
    wh, _ = imported
    logged = _details(SEED1)
    gen = [c for c in _cases(wh, "le-1") if c["task"] == "banking77_gen|0"]
    assert len(gen) == 40 and all(c["question_type"] == "noul" and c["confidence"] is None for c in gen)
    assert all(float(c["correct"]) == logged[_key(c)]["metric"]["em"] for c in gen)


@pytest.mark.slow
def test_language_from_doc_specific_and_one_question_per_task_family(imported):
    wh, _ = imported
    cases = _cases(wh, "le-1")
    sib = [c for c in cases if c["task"].startswith("sib200_mini_")]
    assert {c["qid"] for c in sib} == {"sib200_mini"}
    assert all(c["task"] == "sib200_mini_%s|0" % _lang(c) for c in sib)
    assert {_lang(c) for c in sib} == set(LANGS)
    assert {_lang(c) for c in cases if c["task"].startswith("banking77")} == {None}


@pytest.mark.slow
def test_diff_of_the_two_models_flips_from_lightevals_metrics(imported):
    wh, _ = imported
    diff = Store(wh.root).diff("le-1", "le-2", bootstrap=200)
    a, b = _details(SEED1), _details(SEED2)

    def right(row):
        return row["metric"].get("acc", row["metric"].get("em"))
    pairs = [(right(a[k]), right(b[k])) for k in a]
    assert diff["right_to_wrong"] == sum(1 for x, y in pairs if x == 1 and y == 0)
    assert diff["wrong_to_right"] == sum(1 for x, y in pairs if x == 0 and y == 1)
    assert diff["right_to_wrong"] + diff["wrong_to_right"] > 0 and 0 < diff["mcnemar_p"] <= 1


@pytest.mark.slow
def test_identity_and_reimport(imported, tmp_path):
    wh, _ = imported
    settings = json.loads(Store(wh.root).sql("SELECT settings_json FROM runs WHERE run_id = 'le-1'")["settings_json"][0])
    ident = settings["import"]
    assert ident["harness"] == "lighteval" and ident["harness_version"] is None    # lighteval_sha is "?"
    assert ident["model"] == "models/gpt2-random-seed1"                            # config_general.model_name
    assert ident["normalisation"] == {"norm": "raw", "metric": "acc", "item_id": "doc.id"}
    assert ident["tasks"] == sorted(p.name.split("_2026")[0][len("details_"):] for p in SEED1.glob("*.parquet"))
    assert len(ident["files"]) == 6 and any(p.endswith(".json") for p in ident["files"])
    for path, digest in ident["files"].items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    copy = tmp_path / "copy" / "details" / "models" / "m" / SEED1.name
    shutil.copytree(SEED1, copy)
    shutil.copytree(OUT / "results" / "models" / "gpt2-random-seed1", tmp_path / "copy" / "results" / "models" / "m")
    again = import_path(wh, str(tmp_path / "copy"))        # the same bytes elsewhere are the same files
    assert [(r.run_id, r.existing) for r in again] == [("le-1", True)]
    assert len(wh.run_ids()) == 2
    other = import_path(wh, str(copy), norm="chars")
    assert not other[0].existing and len(wh.run_ids()) == 3


def test_item_id_from_doc_specific(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    folder = tmp_path / "sib"
    folder.mkdir()
    for path in SEED1.glob("details_sib200_mini_*.parquet"):
        shutil.copy(path, folder / path.name)
    import_path(wh, str(folder), run_id="s", item_id="index_id")
    cases = _cases(wh, "s")
    by_lang = {}
    for c in cases:
        by_lang.setdefault(_lang(c), set()).add(c["item_id"])
    assert len(cases) == 60 and by_lang["eng_Latn"] == by_lang["deu_Latn"] == by_lang["fra_Latn"]
    assert all(i.isdigit() and int(i) > 100 for i in by_lang["eng_Latn"])      # SIB-200 index_id, not the row


# ---------------------------------------------------------------------------- bad input
def _rewrite(tmp_path, task: str, change) -> Path:
    """A copy of the seed-1 folder whose details file of `task` went through `change(rows) -> table`."""
    folder = tmp_path / "logs" / "details" / "m" / "d"
    shutil.copytree(SEED1, folder)
    path = next(folder.glob("details_%s|0_*.parquet" % task))
    result = change(pq.read_table(path).to_pylist())
    if isinstance(result, bytes):
        path.write_bytes(result)
    else:
        pq.write_table(result, path)
    return path


def _truncated(rows):
    return (SEED1 / next(SEED1.glob("details_banking77_mc4*")).name).read_bytes()[:3000]


def _without_logprobs(rows):
    for row in rows:
        del row["model_response"]["logprobs"]
    return pa.Table.from_pylist(rows)


def _logprobs_as_text(rows):
    for row in rows:
        row["model_response"]["logprobs"] = [str(x) for x in row["model_response"]["logprobs"]]
    return pa.Table.from_pylist(rows)


def _flip_acc(row_no):
    def change(rows):
        assert not _tied(rows[row_no - 1])
        rows[row_no - 1]["metric"]["acc"] = 1 - rows[row_no - 1]["metric"]["acc"]
        return pa.Table.from_pylist(rows)
    return change


def _gold_out_of_range(rows):
    rows[2]["doc"]["gold_index"] = 9
    return pa.Table.from_pylist(rows)


@pytest.mark.parametrize("task,change,where,needle", [
    ("banking77_mc4", _truncated, "", "is not a readable Parquet file"),
    ("banking77_mc4", _without_logprobs, ":1", "field 'model_response.logprobs' is missing"),
    ("sib200_mini_deu_Latn", _logprobs_as_text, ":1", "field 'model_response.logprobs' must be a list of numbers"),
    ("banking77_mc4", _flip_acc(4), ":4", "field 'metric.acc': lighteval logged"),
    ("banking77_mc4", _gold_out_of_range, ":3", "field 'doc.gold_index'"),
], ids=["truncated", "missing-column", "wrong-type", "acc-disagrees", "gold-out-of-range"])
def test_a_bad_file_is_one_message_naming_file_row_field_and_nothing_is_committed(tmp_path, task, change, where, needle):
    path = _rewrite(tmp_path, task, change)
    shutil.copytree(SEED2, tmp_path / "logs" / "details" / "n" / "d")   # a good second run: not committed either
    wh = tmp_path / "wh"
    Warehouse(wh)
    before = snapshot_tree(wh)
    res = CliRunner().invoke(app, ["import", str(tmp_path / "logs"), "-w", str(wh)])
    assert res.exit_code == 2, res.output
    [message] = [l for l in res.output.splitlines() if l.startswith("laya-cases:")]
    assert "%s%s" % (path, where) in message and needle in message, message
    assert "Traceback" not in res.output
    assert snapshot_tree(wh) == before


def test_cli_imports_with_format_and_refuses_bytes(tmp_path):
    wh = tmp_path / "wh"
    res = CliRunner().invoke(app, ["import", str(SEED2), "--format", "lighteval", "--norm", "chars", "--run-id", "c",
                                   "-w", str(wh)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "c"
    bad = CliRunner().invoke(app, ["import", str(SEED2), "--norm", "bytes", "-w", str(wh)])
    assert bad.exit_code == 2 and "--norm must be one of raw, chars for lighteval" in bad.output
    none = CliRunner().invoke(app, ["import", str(tmp_path), "--format", "lighteval", "-w", str(wh)])
    assert none.exit_code == 2 and "holds no lighteval details" in none.output


@pytest.mark.slow
def test_gold_as_a_list_one_gold_scored_several_unscored(tmp_path):
    """doc.gold_index may be a list (lighteval's as_list): one gold is scored as the index, several are stored
    as a list (unscored, S2.9); lighteval's acc (argmax in the golds) is still checked on each."""
    def as_lists(rows):
        for row in rows:
            row["doc"]["gold_index"] = [row["doc"]["gold_index"]]
        first = rows[0]["doc"]
        first["gold_index"] = sorted({first["gold_index"][0], (first["gold_index"][0] + 1) % len(first["choices"])})
        return pa.Table.from_pylist(rows)
    path = _rewrite(tmp_path, "banking77_mc4", as_lists)
    wh = Warehouse(tmp_path / "wh")
    import_path(wh, str(path), run_id="g")
    rows = {r["doc"]["id"]: r for r in pq.read_table(path).to_pylist()}
    cases = {c["item_id"]: c for c in _cases(wh, "g") if c["task"] == "banking77_mc4|0"}
    several = [i for i, r in rows.items() if len(r["doc"]["gold_index"]) > 1]
    assert len(several) == 1 and cases[several[0]]["correct"] is None
    assert all(float(cases[i]["correct"]) == r["metric"]["acc"] for i, r in rows.items() if i not in several)
