"""issue 31 item 3: HELM run folders become runs (docs/imports.md, "HELM").

The fixtures are real crfm-helm 0.5.16 output (tests/fixtures/imports/helm/README.md): one tiny GPT-2 over
BANKING77 as 4-option multiple choice with the joint adapter (max_prob only), the separate-original and the
separate-calibrated adapter (per-reference logprobs), valid and test splits, lowercase and typos
perturbations. Every expectation below is read from HELM's JSON with plain Python and numpy (its own
per-instance exact_match, max_prob, predicted_index and token logprobs), never through the import.
"""
from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, snapshot_tree
from laya_cases.api import Store
from laya_cases.imports import detect, import_path
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app

OUT = ROOT / "tests" / "fixtures" / "imports" / "helm" / "out"
SUITE = OUT / "runs" / "fx"
JOINT, CALIBRATED, ORIGINAL = sorted(SUITE.iterdir())          # path order = the import's run order
MODEL = "huggingface/gpt2-letters"


def _load(folder: Path, name: str):
    return json.loads((folder / name).read_text(encoding="utf-8"))


def _key(instance_id, perturbation):
    return instance_id, (perturbation or {}).get("name", "original")


def _stats(folder: Path):
    """(instance id, perturbation name) -> {stat name: mean}, as HELM wrote per_instance_stats.json."""
    out = {}
    for entry in _load(folder, "per_instance_stats.json"):
        out[_key(entry["instance_id"], entry.get("perturbation"))] = {s["name"]["name"]: s.get("mean")
                                                                      for s in entry["stats"]}
    return out


def _instances(folder: Path):
    """(instance id, perturbation name) -> [request states], in file order."""
    out = {}
    for rs in _load(folder, "scenario_state.json")["request_states"]:
        out.setdefault(_key(rs["instance"]["id"], rs["instance"].get("perturbation")), []).append(rs)
    return out


def _tail_logprob(rs):
    """HELM's per-reference (logprob, n tokens): the shortest tail of the echoed tokens spelling " " + ref."""
    ref = rs["instance"]["references"][rs["reference_index"]]["output"]["text"]
    tokens = rs["result"]["completions"][0]["tokens"]
    for n in range(1, len(tokens) + 1):
        if "".join(t["text"] for t in tokens[-n:]) == " " + ref:
            return sum(t["logprob"] for t in tokens[-n:]), n
    raise AssertionError(ref)


def _scores(states, calibrated):
    by = {(rs["reference_index"], rs["request_mode"]): _tail_logprob(rs) for rs in states}
    k = len(states[0]["instance"]["references"])
    raw = [by[(i, "original")][0] for i in range(k)]
    if calibrated:
        return raw, [by[(i, "original")][0] - by[(i, "calibration")][0] for i in range(k)]
    return raw, [by[(i, "original")][0] / by[(i, "original")][1] for i in range(k)]


def _softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("helm") / "wh")
    return wh, import_path(wh, str(OUT), run_id="h")


RUNS = {"h-1": JOINT, "h-2": CALIBRATED, "h-3": ORIGINAL}


def _cases(wh, run):
    rows = Store(wh.root).sql("SELECT item_id, tags, qid, correct, confidence, probabilities, logits, predicted, "
                              "options, answer_json FROM cases WHERE run_id = '%s'" % run).to_dicts()
    for row in rows:
        tags = dict(t.split("=", 1) for t in row["tags"])
        row["split"], row["perturbation"] = tags["split"], tags["perturbation"]
        row["key"] = (row["item_id"], row["perturbation"])
    return rows


def test_detect_names_helm_from_its_files():
    assert detect(str(OUT)) == "helm"
    assert detect(str(ORIGINAL)) == "helm"
    assert detect(str(JOINT / "scenario_state.json")) == "helm"
    assert detect(str(JOINT / "per_instance_stats.json")) == "helm"


def test_one_run_per_run_folder_one_case_per_instance_and_copy(imported):
    wh, results = imported
    assert [r.run_id for r in results] == ["h-1", "h-2", "h-3"] and not any(r.existing for r in results)
    for result in results:
        folder = RUNS[result.run_id]
        assert result.n_cases == len(_load(folder, "per_instance_stats.json")) == len(_instances(folder))
    assert [r.n_cases for r in results] == [22, 9, 22]


@pytest.mark.parametrize("run", ["h-1", "h-2", "h-3"])
def test_correct_is_helms_own_exact_match_on_every_row(imported, run):
    wh, _ = imported
    logged = _stats(RUNS[run])
    cases = _cases(wh, run)
    assert len(cases) == len(logged)
    for case in cases:
        em = logged[case["key"]]["exact_match"]
        assert em in (0.0, 1.0)                        # no tie in these files
        assert float(case["correct"]) == em, case["key"]
    assert {c["correct"] for c in cases} == {True, False}          # not vacuous


@pytest.mark.parametrize("run,calibrated", [("h-3", False), ("h-2", True)])
def test_separate_probabilities_are_softmax_of_helms_reference_scores(imported, run, calibrated):
    wh, _ = imported
    folder = RUNS[run]
    logged, states = _stats(folder), _instances(folder)
    for case in _cases(wh, run):
        raw, scores = _scores(states[case["key"]], calibrated)
        probs = _softmax(scores)
        assert case["probabilities"] == pytest.approx(list(probs), rel=1e-12, abs=1e-15)
        assert case["logits"] == pytest.approx(raw, rel=1e-12)
        assert case["confidence"] == max(case["probabilities"])
        assert case["confidence"] == pytest.approx(logged[case["key"]]["max_prob"], rel=1e-12)
        refs = [r["output"]["text"] for r in states[case["key"]][0]["instance"]["references"]]
        assert case["options"] == refs
        assert case["predicted"] == refs[int(logged[case["key"]]["predicted_index"])] == refs[int(np.argmax(scores))]


def test_joint_confidence_is_helms_max_prob_and_the_choice_its_mapped_answer(imported):
    wh, _ = imported
    logged, states = _stats(JOINT), _instances(JOINT)
    cases = _cases(wh, "h-1")
    for case in cases:
        [rs] = states[case["key"]]
        completion = rs["result"]["completions"][0]
        assert case["confidence"] == pytest.approx(logged[case["key"]]["max_prob"], rel=1e-12)
        assert case["confidence"] == pytest.approx(math.exp(completion["logprob"]), rel=1e-12)
        assert case["probabilities"] is None and case["logits"] is None
        assert case["predicted"] == rs["output_mapping"][completion["text"].strip()]
    assert len({round(c["confidence"], 6) for c in cases}) > 10          # a real spread, not all 1.0
    ident = _identity(wh, "h-1")
    assert ident["normalisation"]["confidence"] == "max_prob" and ident["normalisation"]["probabilities"] is None
    res = CliRunner().invoke(app, ["report", "h-1", "-w", str(wh.root)])
    assert res.exit_code == 0 and "HELM's max_prob" in res.stderr


def test_split_and_perturbation_are_slices_with_helms_counts(imported):
    wh, _ = imported
    for run, folder in RUNS.items():
        want = Counter()
        for (_, pert), states in _instances(folder).items():
            want["split=%s" % states[0]["instance"]["split"]] += 1
            want["perturbation=%s" % pert] += 1
        got = Counter(t for c in _cases(wh, run) for t in c["tags"])
        assert got == want, run
    assert Counter(t for c in _cases(wh, "h-3") for t in c["tags"]) == {
        "split=valid": 7, "split=test": 15, "perturbation=original": 9, "perturbation=lowercase": 6,
        "perturbation=typos": 7}


def test_perturbed_copies_share_the_original_instance_id(imported):
    wh, _ = imported
    cases = _cases(wh, "h-3")
    originals = {c["item_id"] for c in cases if c["perturbation"] == "original"}
    copies = {c["item_id"] for c in cases if c["perturbation"] != "original"}
    assert copies and copies <= originals and len(originals) == 9


def test_report_slices_are_helms_exact_match_means(imported, tmp_path):
    wh, _ = imported
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["report", "h-3", "-w", str(wh.root), "--json", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    logged = _stats(ORIGINAL)
    assert doc["overall"]["choice_accuracy"] == pytest.approx(np.mean([s["exact_match"] for s in logged.values()]),
                                                              abs=1e-12)
    for pert in ("original", "lowercase", "typos"):
        ems = [s["exact_match"] for (_, p), s in logged.items() if p == pert]
        assert doc["slices"]["tag"]["perturbation=%s" % pert]["choice_accuracy"] == pytest.approx(np.mean(ems),
                                                                                                  abs=1e-12)
    assert doc["overall"]["mean_confidence"] == pytest.approx(np.mean([s["max_prob"] for s in logged.values()]),
                                                              abs=1e-12)


def test_diff_of_joint_and_separate_pairs_every_instance_and_copy_by_helms_exact_match(imported):
    """Both adapters ask the same instances (and copies): `diff` pairs them on item id and question."""
    wh, _ = imported
    diff = Store(wh.root).diff("h-1", "h-3", bootstrap=200)
    a, b = _stats(JOINT), _stats(ORIGINAL)
    assert set(a) == set(b) and diff["paired"] == len(a) == 22 and diff["only_in_a"] == diff["only_in_b"] == 0
    pairs = [(a[k]["exact_match"], b[k]["exact_match"]) for k in a]
    assert diff["right_to_wrong"] == sum(1 for x, y in pairs if x == 1 and y == 0)
    assert diff["wrong_to_right"] == sum(1 for x, y in pairs if x == 0 and y == 1)
    assert diff["right_to_wrong"] + diff["wrong_to_right"] > 0


def _identity(wh, run):
    settings = Store(wh.root).sql("SELECT settings_json FROM runs WHERE run_id = '%s'" % run)["settings_json"][0]
    return json.loads(settings)["import"]


def test_identity_and_reimport(imported, tmp_path):
    wh, _ = imported
    ident = _identity(wh, "h-3")
    assert ident["harness"] == "helm" and ident["harness_version"] is None     # HELM writes no version
    assert ident["model"] == MODEL
    assert ident["tasks"] == [_load(ORIGINAL, "run_spec.json")["name"]]
    assert ident["normalisation"] == {"adapter": "multiple_choice_separate_original", "score": "logprob / num_tokens",
                                      "probabilities": "softmax(score)", "item_id": "instance.id"}
    assert sorted(Path(p).name for p in ident["files"]) == ["per_instance_stats.json", "run_spec.json",
                                                            "scenario_state.json"]
    for path, digest in ident["files"].items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    copy = tmp_path / "elsewhere" / "r"
    shutil.copytree(ORIGINAL, copy)
    again = import_path(wh, str(copy))                    # the same bytes elsewhere are the same logs
    assert [(r.run_id, r.existing) for r in again] == [("h-3", True)]
    assert len(wh.run_ids()) == 3


def test_cli_import_then_report_and_reimport_makes_no_new_run(tmp_path):
    wh = tmp_path / "wh"
    res = CliRunner().invoke(app, ["import", str(SUITE), "--run-id", "c", "-w", str(wh)])
    assert res.exit_code == 0, res.output
    assert res.stdout.split() == ["c-1", "c-2", "c-3"]
    out = tmp_path / "c2.json"
    rep = CliRunner().invoke(app, ["report", "c-2", "-w", str(wh), "--json", str(out)])
    assert rep.exit_code == 0, rep.output
    assert json.loads(out.read_text(encoding="utf-8"))["overall"]["choice_accuracy"] == pytest.approx(
        np.mean([s["exact_match"] for s in _stats(CALIBRATED).values()]), abs=1e-12)
    before = snapshot_tree(wh)
    again = CliRunner().invoke(app, ["import", str(OUT), "--format", "helm", "-w", str(wh)])
    assert again.exit_code == 0 and again.stdout.split() == ["c-1", "c-2", "c-3"]
    assert "already imported" in again.stderr and snapshot_tree(wh) == before


def test_cli_refuses_norm_and_a_folder_without_helm(tmp_path):
    wh = tmp_path / "wh"
    bad = CliRunner().invoke(app, ["import", str(JOINT), "--norm", "chars", "-w", str(wh)])
    assert bad.exit_code == 2 and "--norm is not read for HELM" in bad.output
    none = CliRunner().invoke(app, ["import", str(tmp_path), "--format", "helm", "-w", str(wh)])
    assert none.exit_code == 2 and "holds no HELM run folder" in none.output


def test_an_unmapped_joint_answer_is_no_choice_and_wrong(tmp_path):
    """A joint completion that is no answer letter maps to nothing: HELM scores it 0; the decision has no choice
    (even a text equal to an option is none: HELM does not map it) and keeps the text as `response`."""
    folder = tmp_path / "r"
    shutil.copytree(JOINT, folder)
    state = _load(folder, "scenario_state.json")
    rs = state["request_states"][0]
    gold = next(r["output"]["text"] for r in rs["instance"]["references"] if "correct" in r["tags"])
    rs["result"]["completions"][0]["text"] = " " + gold          # the gold's text, not its letter
    (folder / "scenario_state.json").write_text(json.dumps(state), encoding="utf-8")
    stats = _load(folder, "per_instance_stats.json")
    for s in stats[0]["stats"]:
        if s["name"]["name"] == "exact_match":
            s["mean"] = 0.0
    (folder / "per_instance_stats.json").write_text(json.dumps(stats), encoding="utf-8")
    wh = Warehouse(tmp_path / "wh")
    import_path(wh, str(folder), run_id="u")
    [case] = [c for c in _cases(wh, "u") if c["key"] == _key(rs["instance"]["id"], None)]
    assert case["predicted"] is None and case["correct"] is False
    assert json.loads(case["answer_json"])["response"] == " " + gold


def test_sub_split_and_train_trials_become_tags(tmp_path):
    """HELM's sub_split and, with num_train_trials > 1, each trial's rows are slices too (the copies here are
    the fixture's own rows with another trial index: HELM repeats every instance per trial)."""
    folder = tmp_path / "r"
    shutil.copytree(JOINT, folder)
    state, stats = _load(folder, "scenario_state.json"), _load(folder, "per_instance_stats.json")
    state["adapter_spec"]["num_train_trials"] = 2
    state["request_states"][0]["instance"]["sub_split"] = "short"
    state["request_states"] += [dict(rs, train_trial_index=1) for rs in state["request_states"]]
    stats += [dict(entry, train_trial_index=1) for entry in stats]
    (folder / "scenario_state.json").write_text(json.dumps(state), encoding="utf-8")
    (folder / "per_instance_stats.json").write_text(json.dumps(stats), encoding="utf-8")
    wh = Warehouse(tmp_path / "wh")
    [result] = import_path(wh, str(folder), run_id="t")
    tags = Counter(t for c in _cases(wh, "t") for t in c["tags"])
    assert result.n_cases == 44 and tags["train_trial=0"] == tags["train_trial=1"] == 22
    assert tags["sub_split=short"] == 2                   # the instance's row in each trial


# ---------------------------------------------------------------------------- bad input
def _edit(name, change):
    def apply(folder: Path) -> Path:
        path = folder / name
        if change is None:
            path.unlink()
            return folder / "scenario_state.json"
        text = path.read_text(encoding="utf-8")
        result = change(json.loads(text), text)
        path.write_text(result if isinstance(result, str) else json.dumps(result), encoding="utf-8")
        return path
    return apply


def _truncated(doc, text):
    return text[:5000]


def _without_result(doc, text):
    del doc["request_states"][3]["result"]
    return doc


def _logprob_as_text(doc, text):
    token = doc["request_states"][5]["result"]["completions"][0]["tokens"][-1]
    token["logprob"] = str(token["logprob"])
    return doc


def _logprob_changed(doc, text):
    token = doc["request_states"][5]["result"]["completions"][0]["tokens"][-1]
    token["logprob"] -= 0.5
    return doc


def _flip_exact_match(doc, text):
    for s in doc[4]["stats"]:
        if s["name"]["name"] == "exact_match":
            s["mean"] = 1.0 - s["mean"]
    return doc


def _max_prob_as_text(doc, text):
    for s in doc[2]["stats"]:
        if s["name"]["name"] == "max_prob":
            s["mean"] = "0.5"
    return doc


def _no_stats_entry(doc, text):
    del doc[9]
    return doc


def _generation_adapter(doc, text):
    doc["adapter_spec"]["method"] = "generation"
    return doc


@pytest.mark.parametrize("run,change,where,needle", [
    (ORIGINAL, _edit("scenario_state.json", _truncated), "", "is not valid JSON"),
    (ORIGINAL, _edit("scenario_state.json", _without_result), " request_states[3]", "field 'result.completions'"),
    (ORIGINAL, _edit("scenario_state.json", _logprob_as_text), " request_states[5]",
     "field 'result.completions[0].tokens' must be a list of {text, logprob}"),
    (ORIGINAL, _edit("scenario_state.json", _logprob_changed), " request_states[4])", "field 'stats.max_prob': HELM logged"),
    (JOINT, _edit("per_instance_stats.json", _flip_exact_match), " [4]", "field 'stats.exact_match': HELM logged"),
    (JOINT, _edit("per_instance_stats.json", _max_prob_as_text), " [2]", "field 'stats.max_prob.mean' must be a number"),
    (CALIBRATED, _edit("per_instance_stats.json", None), "", "no per_instance_stats.json beside it"),
    (JOINT, _edit("per_instance_stats.json", _no_stats_entry), None, "has no entry for instance 'id11' (perturbation typos"),
    (CALIBRATED, _edit("scenario_state.json", _generation_adapter), " field 'adapter_spec.method'",
     "is 'generation': only multiple_choice_joint"),
], ids=["truncated", "missing-field", "wrong-type", "logprob-disagrees", "exact-match-disagrees", "stat-wrong-type",
        "stats-missing", "stats-entry-missing", "not-multiple-choice"])
def test_a_bad_file_is_one_message_naming_file_and_field_and_nothing_is_committed(tmp_path, run, change, where,
                                                                                  needle):
    logs = tmp_path / "logs"
    for folder in (JOINT, CALIBRATED, ORIGINAL):        # the good runs beside it are not committed either
        shutil.copytree(folder, logs / folder.name)
    path = change(logs / run.name)
    wh = tmp_path / "wh"
    Warehouse(wh)
    before = snapshot_tree(wh)
    res = CliRunner().invoke(app, ["import", str(logs), "-w", str(wh)])
    assert res.exit_code == 2, res.output
    [message] = [l for l in res.output.splitlines() if l.startswith("laya-cases:")]
    if where is None:                  # named from the request state it belongs to
        path, where = path.parent / "scenario_state.json", " request_states[9]: per_instance_stats.json"
    assert "%s%s" % (path, where) in message and needle in message, message
    assert "Traceback" not in res.output
    assert snapshot_tree(wh) == before
