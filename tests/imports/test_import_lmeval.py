"""issue 31 item 1: lm-evaluation-harness --log_samples output becomes runs (docs/imports.md).

The fixtures are real lm-eval 0.4.13 logs of two randomly initialised GPT-2s over the same docs
(tests/fixtures/imports/lmeval/README.md): BANKING77 as 4-option multiple choice (index targets, brier
logged), SIB-200 in three parallel languages (text targets), and a generative BANKING77 task. Every
expectation below is read from lm-eval's own per-doc fields, not from our import.
"""
from __future__ import annotations

import glob
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases.core.errors import UsageError
from laya_cases.query import sql as sqlfiles
from laya_cases.api import Store
from laya_cases.harness.crosslingual import report as crosslingual_report
from laya_cases.imports import detect, import_path
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

LOGS = ROOT / "tests" / "fixtures" / "imports" / "lmeval"
SEED1, SEED2 = LOGS / "gpt2-random-seed1", LOGS / "gpt2-random-seed2"
LANGS = ("deu_Latn", "eng_Latn", "fra_Latn")


def _samples(folder: Path):
    """(task, doc_id) -> lm-eval's logged sample, for every samples file of one results set."""
    out = {}
    for path in sorted(folder.glob("samples_*.jsonl")):
        task = path.name[len("samples_"):].rsplit("_", 1)[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            out[(task, sample["doc_id"])] = sample
    return out


def _results(folder: Path):
    return json.loads(next(folder.glob("results_*.json")).read_text(encoding="utf-8"))


def _tied(sample, norm="raw"):
    lls = [float(r[0]) for r in sample["filtered_resps"]]
    return lls.count(max(lls)) > 1


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("lmeval") / "wh")
    results = import_path(wh, str(LOGS), run_id="lm")
    return wh, results


def _cases(wh, run):
    store = Store(wh.root)
    return store.sql("SELECT tags[1] AS task, item_id, qid, language, question_type, correct, confidence, "
                     "probabilities, logits, predicted FROM cases WHERE run_id = '%s'" % run).to_dicts()


def test_detect_names_lm_eval_from_its_files():
    assert detect(str(LOGS)) == "lm-eval" and detect(str(next(SEED1.glob("results_*.json")))) == "lm-eval"
    assert detect(str(next(SEED1.glob("samples_banking77_mc4_*.jsonl")))) == "lm-eval"


def test_one_run_per_results_file_every_doc_a_case(imported):
    wh, results = imported
    assert [r.run_id for r in results] == ["lm-1", "lm-2"] and not any(r.existing for r in results)
    for result, folder in zip(results, (SEED1, SEED2)):
        assert result.n_cases == len(_samples(folder)) == 60 + 60 + 3 * 30


@pytest.mark.parametrize("norm,metric", [("raw", "acc"), ("chars", "acc_norm")])
def test_correct_is_lm_evals_own_acc_for_every_untied_doc(tmp_path, norm, metric):
    """Per row: our correctness equals the metric --norm reproduces, as lm-eval logged it."""
    wh = Warehouse(tmp_path / "wh")
    [run] = import_path(wh, str(SEED1), norm=norm)
    logged = _samples(SEED1)
    compared = 0
    for case in _cases(wh, run.run_id):
        sample = logged[(case["task"], int(case["item_id"]))]
        if case["question_type"] == "choice" and not _tied(sample):
            assert float(case["correct"]) == sample[metric], (case["task"], case["item_id"])
            compared += 1
    assert compared >= 140                      # not vacuous: nearly all 150 multiple-choice docs are compared


def test_norms_differ_on_these_logs():
    """acc and acc_norm disagree on some docs here, so the test above checks two different rules."""
    logged = _samples(SEED1)
    assert any(s.get("acc") != s.get("acc_norm") for s in logged.values() if "acc_norm" in s)


def test_probabilities_are_softmax_of_log_likelihoods_and_brier_is_lm_evals(imported):
    wh, _ = imported
    con = connect(wh, ["lm-1"])
    rows = dict((q, (b, n)) for q, b, n in sqlfiles.query(con, "imports/lmeval_brier.sql", {"run_id": "lm-1"}).fetchall())
    theirs = _results(SEED1)["results"]["banking77_mc4"]["brier_score,none"]
    assert rows["banking77_mc4"][1] == 60
    assert rows["banking77_mc4"][0] == pytest.approx(theirs, abs=1e-12)
    logged = _samples(SEED1)
    for case in _cases(wh, "lm-1"):
        if case["task"] == "banking77_mc4":
            sample = logged[("banking77_mc4", int(case["item_id"]))]
            assert case["logits"] == [float(r[0]) for r in sample["filtered_resps"]]
            probs = [float(x) for x in sample["brier_score"][1].strip("[]").split()]
            assert case["probabilities"] == pytest.approx(probs, rel=1e-6, abs=1e-7)
            assert case["confidence"] == max(case["probabilities"])


def test_report_per_language_equals_lm_evals_accuracy(imported):
    wh, _ = imported
    report = Store(wh.root).report("lm-1", slices=["language"])
    results = _results(SEED1)["results"]
    for lang in LANGS:
        assert report["slices"]["language"][lang]["choice_accuracy"] == pytest.approx(
            results["sib200_mini_" + lang]["acc,none"], abs=1e-12)


def test_diff_of_the_two_models_flips_and_mcnemar(imported):
    wh, _ = imported
    diff = Store(wh.root).diff("lm-1", "lm-2", bootstrap=200)
    a, b = _samples(SEED1), _samples(SEED2)
    right = {k: (a[k].get("acc", a[k].get("exact_match")), b[k].get("acc", b[k].get("exact_match"))) for k in a}
    assert diff["right_to_wrong"] == sum(1 for x, y in right.values() if x == 1 and y == 0)
    assert diff["wrong_to_right"] == sum(1 for x, y in right.values() if x == 0 and y == 1)
    assert diff["right_to_wrong"] + diff["wrong_to_right"] > 0 and 0 < diff["mcnemar_p"] <= 1


def test_crosslingual_on_the_multilingual_task(imported):
    wh, _ = imported
    doc = crosslingual_report(wh, "lm-1", pivot="eng_Latn")
    assert doc["summary"]["languages"] == 3 and doc["summary"]["items"] == 30
    results = _results(SEED1)["results"]
    for row in doc["languages"]:
        assert row["accuracy"] == pytest.approx(results["sib200_mini_" + row["lang"]]["acc,none"], abs=1e-12)


def test_generative_docs_are_noul_without_confidence(imported):
    wh, _ = imported
    logged = _samples(SEED1)
    gen = [c for c in _cases(wh, "lm-1") if c["task"] == "banking77_gen"]
    assert len(gen) == 60 and all(c["question_type"] == "noul" and c["confidence"] is None for c in gen)
    assert all(float(c["correct"]) == logged[("banking77_gen", int(c["item_id"]))]["exact_match"] for c in gen)


def test_identity_and_reimport(imported, tmp_path):
    wh, _ = imported
    settings = json.loads(Store(wh.root).sql("SELECT settings_json FROM runs WHERE run_id = 'lm-1'")["settings_json"][0])
    ident = settings["import"]
    assert ident["harness"] == "lm-eval" and ident["harness_version"] == "0.4.13"
    assert ident["model"].endswith("gpt2-random-seed1") and ident["normalisation"]["norm"] == "raw"
    assert sorted(ident["tasks"]) == ["banking77_gen", "banking77_mc4"] + ["sib200_mini_" + l for l in LANGS]
    for path, digest in ident["files"].items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    copy = tmp_path / "copy"
    shutil.copytree(SEED1, copy)                   # the same bytes elsewhere are the same logs
    again = import_path(wh, str(copy))
    assert [(r.run_id, r.existing) for r in again] == [("lm-1", True)]
    assert len(wh.run_ids()) == 2
    other = import_path(wh, str(copy), norm="chars")
    assert not other[0].existing and len(wh.run_ids()) == 3


# ---------------------------------------------------------------------------- bad input
def _copy_with(tmp_path, task: str, line_no: int, change) -> Path:
    folder = tmp_path / "logs" / "m"
    shutil.copytree(SEED1, folder)
    path = next(folder.glob("samples_%s_*.jsonl" % task))
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line_no - 1] = change(lines[line_no - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _edit(field, value):
    def change(line):
        sample = json.loads(line)
        if value is None:
            del sample[field]
        else:
            sample[field] = value(sample) if callable(value) else value
        return json.dumps(sample, ensure_ascii=False)
    return change


@pytest.mark.parametrize("task,line,change,needle", [
    ("sib200_mini_deu_Latn", 3, lambda l: l[:40], "is not valid JSON"),
    ("banking77_mc4", 2, _edit("filtered_resps", None), "field 'filtered_resps'"),
    ("banking77_mc4", 4, _edit("acc", lambda s: 1.0 - s["acc"]), "field 'acc'"),
    ("banking77_mc4", 5, _edit("brier_score", lambda s: [s["brier_score"][0], "[0.25 0.25 0.25 0.25]"]),
     "field 'brier_score'"),
    ("sib200_mini_eng_Latn", 6, _edit("target", "astronomy"), "field 'target'"),
    ("banking77_gen", 7, _edit("exact_match", None), "no numeric per-doc metric"),
], ids=["json", "missing-resps", "acc-disagrees", "brier-disagrees", "target-not-a-choice", "gen-no-metric"])
def test_a_bad_line_is_one_message_naming_file_line_field_and_nothing_is_committed(tmp_path, task, line, change, needle):
    path = _copy_with(tmp_path, task, line, change)
    shutil.copytree(SEED2, tmp_path / "logs" / "n")     # a good second results set: it must not be committed either
    wh = tmp_path / "wh"
    before = snapshot_tree(wh)
    res = CliRunner().invoke(app, ["import", str(tmp_path / "logs"), "-w", str(wh)])
    assert res.exit_code == 2, res.output
    [message] = [l for l in res.output.splitlines() if l.startswith("laya-cases:")]
    assert "%s:%d" % (path, line) in message and needle in message, message
    assert "Traceback" not in res.output
    assert snapshot_tree(wh) == before or not Warehouse(wh).run_ids()


@pytest.mark.parametrize("target,gold", [("C", 2), (2, 2), ("2", 2), ([2], 2), ([2, 0], 2)])
def test_target_as_letter_index_text_or_list(tmp_path, target, gold):
    """task.py's readings of a target; a list of several right answers is stored, unscored (S2.9)."""
    path = _copy_with(tmp_path, "banking77_mc4", 1, _edit("target", target))
    wh = Warehouse(tmp_path / "wh")
    import_path(wh, str(path.parent), run_id="t")
    case = next(c for c in _cases(wh, "t") if c["task"] == "banking77_mc4" and c["item_id"] == "0")
    sample = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    if isinstance(target, list) and len(target) > 1:
        assert case["correct"] is None
    else:
        assert float(case["correct"]) == sample["acc"]


def test_cli_imports_and_reports(tmp_path):
    wh = tmp_path / "wh"
    res = CliRunner().invoke(app, ["import", str(SEED1), "--norm", "chars", "--run-id", "c", "-w", str(wh)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "c"
    bad = CliRunner().invoke(app, ["import", str(SEED1), "--norm", "words", "-w", str(wh)])
    assert bad.exit_code == 2 and "--norm must be one of raw, chars, bytes" in bad.output
    with pytest.raises(UsageError, match="no lm-eval results"):
        import_path(Warehouse(wh), str(tmp_path), fmt="lm-eval")
    missing = CliRunner().invoke(app, ["import", str(tmp_path / "nowhere"), "-w", str(wh)])
    assert missing.exit_code == 2 and missing.stderr == "laya-cases: %s: no such file or folder\n" % (tmp_path / "nowhere")
    assert glob.glob(str(wh / "runs" / "*"))


def test_the_progress_callback_counts_every_row_read(tmp_path, monkeypatch):
    """`import` draws a bar on a terminal from import_path's progress callback: every PROGRESS_EVERY rows and
    once at the end, the count of rows read so far over every run of the path."""
    from laya_cases.imports import common, lmeval_columns
    from laya_cases.record.ingest.blocks import Fallback

    def refused(self, recorder, progress=None):          # the per-row path (the column-wise one: a call a block,
        raise Fallback("row by row")                     # tests/imports/test_import_lmeval_columns.py)

    monkeypatch.setattr(lmeval_columns.Columnwise, "record", refused)
    monkeypatch.setattr(common, "PROGRESS_EVERY", 7)
    seen = []
    results = import_path(Warehouse(tmp_path / "wh"), str(LOGS), progress=seen.append)
    total = sum(r.n_cases for r in results)
    assert seen[-1] == total and seen[:-1] == list(range(7, total + 1, 7))
