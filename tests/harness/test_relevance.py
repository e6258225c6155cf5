"""The relevance benchmark (spec S8, issue 10): T8.1 and T8.2 through the whole path (dataset folder ->
runs -> warehouse -> sql/relevance -> CSVs), --pick-on, rank groups, resume of finished pairs and bad input.
Runners here are scripted doubles; tests/harness/test_relevance_models.py runs MiniLM and SmolLM2."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

from helpers import ROOT, needs_shared_data, shared_data
from laya_cases.core.errors import UsageError
from laya_cases.harness.relevance import board, metrics
from laya_cases.harness.relevance.bench import BenchOptions, run_benchmark
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs
from laya_cases.runners.hf_generate import verdict_answer
from laya_cases.store.warehouse import Warehouse


class ScriptedScorer(Runner):
    """Scoring double: the sentence is the yes score (a float as text)."""

    name = "scripted-scorer"
    capabilities = Capabilities(question_types=("noul",))

    def __init__(self, **kwargs: Any):
        self.info = RunnerInfo(runner=self.name, model_id="scripted", settings={"decision_rule": "sentence = yes"})

    def predict_batch(self, states, questions, **kwargs):
        out = []
        for state in states:
            try:
                yes = float(state["sentence"])
            except ValueError:                  # no score at all: the sweep reads it as 0.0 (S8.6)
                out.append({"answers": {q: {"type": "noul"} for q in questions}})
                continue
            out.append({"answers": {q: answer_from_probs(b, [1 - yes, yes]) for q, b in questions.items()},
                        "facts": {q: {"relevance_score": yes, "no_score": 1 - yes, "native_score": yes}
                                  for q in questions}})
        return out


class ScriptedGenerator(ScriptedScorer):
    """Generative double (named hf-generate, so the run is generative): the sentence is the reply text."""

    name = "hf-generate"

    def predict_batch(self, states, questions, **kwargs):
        out = []
        for state in states:
            text = state["sentence"]
            answer = verdict_answer(text, text == "TRUNCATED")
            out.append({"answers": {q: dict(answer) for q in questions},
                        "facts": {q: {"raw_text": text} for q in questions}})
        return out


@pytest.fixture
def scripted():
    registry.register("scripted-scorer", ScriptedScorer)
    registry.register("scripted-generator", ScriptedGenerator)
    yield
    registry.unregister("scripted-scorer")
    registry.unregister("scripted-generator")


def write_language(folder: Path, lang: str, items: List[tuple]) -> None:
    """items: (label yes/no, sentence) in the stored xquad_r_relevance layout."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ("%s.jsonl" % lang), "w", encoding="utf-8") as handle:
        for i, (label, sentence) in enumerate(items):
            handle.write(json.dumps({"id": "%s-%d" % (lang, i), "language": lang, "question_id": "q%d" % i,
                                     "question": "question %d?" % i, "sentence": sentence, "label": int(label == "yes"),
                                     "label_text": label, "pair": "p"}) + "\n")


def read_csv(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


T81 = [("yes", "yes"), ("yes", "no"), ("yes", "hmm"), ("no", "no"), ("no", "yes"), ("no", "no"), ("no", "TRUNCATED"),
       ("yes", "Yes.")]
T82 = [("yes", "0.9"), ("yes", "0.7"), ("yes", "0.4"), ("no", "0.4"), ("no", "0.2"), ("no", "0.05")]


def bench(wh: Warehouse, data: Path, runner: str, **kw: Any):
    return run_benchmark(wh, BenchOptions(data=str(data), model="m", runner=runner, name=kw.pop("name", runner), **kw))


# ---------------------------------------------------------------------------- T8.1
@pytest.mark.slow
def test_t8_1_generative_counts_and_metrics(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T81)
    wh = Warehouse(tmp_path / "wh")
    bench(wh, tmp_path / "data", "scripted-generator")
    con = metrics.connect(wh)
    row = metrics.S.rows(con.execute("SELECT * FROM rel_metrics"))[0]
    assert (row["tp"], row["fn"], row["tn"], row["fp"], row["unparsed"], row["n"]) == (2, 1, 2, 1, 2, 8)
    assert row["accuracy"] == 0.5 and row["unparsed_rate"] == 0.25
    assert row["precision"] == row["recall"] == row["balanced_accuracy"] == 2 / 3
    assert abs(row["f1"] - 2 / 3) < 1e-15 and abs(row["matthews_corrcoef"] - 1 / 3) < 1e-15
    assert (row["precision_n"], row["recall_n"], row["specificity_n"], row["truncated"]) == (3, 3, 3, 1)
    raw = con.execute("SELECT raw_text, parsed, truncated, answer_type FROM cases ORDER BY row_index").fetchall()
    assert raw[2] == ("hmm", False, False, "unparsed") and raw[6] == ("TRUNCATED", False, True, "unparsed")
    facts = json.loads(con.execute("SELECT settings_json FROM runs").fetchone()[0])["relevance"]
    assert facts["mode"] == "generative" and facts["benchmark_sha256"] and facts["items"] == 8
    metrics.export(wh, [], str(tmp_path / "out"))
    lb = read_csv(tmp_path / "out" / "leaderboard.csv")[0]
    assert [lb[k] for k in ("accuracy", "precision", "recall", "f1", "balanced_accuracy", "matthews_corrcoef",
                            "unparsed_rate", "truncated")] == ["0.5", "0.6667", "0.6667", "0.6667", "0.6667", "0.3333",
                                                               "0.25", "1"]
    assert read_csv(tmp_path / "out" / "threshold_sweep.csv") == []     # no scoring model, no sweep


# ---------------------------------------------------------------------------- T8.2
@pytest.mark.slow
def test_t8_2_scoring_sweep_auc_and_best_points(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T82)
    wh = Warehouse(tmp_path / "wh")
    bench(wh, tmp_path / "data", "scripted-scorer")
    con = metrics.connect(wh)
    sweep = {r["threshold"]: r for r in metrics.S.rows(con.execute("SELECT * FROM rel_sweep"))}
    assert len(sweep) == 19
    at4 = sweep[0.4]
    assert (at4["tp"], at4["fp"], at4["tn"], at4["fn"]) == (3, 1, 2, 0)
    assert [round(at4[k], 4) for k in ("accuracy", "precision", "recall", "f1", "balanced_accuracy",
                                       "matthews_corrcoef")] == [0.8333, 0.75, 1.0, 0.8571, 0.8333, 0.7071]
    at5 = sweep[0.5]
    assert [round(at5[k], 4) for k in ("precision", "recall", "f1", "matthews_corrcoef")] == [1.0, 0.6667, 0.8, 0.7071]
    assert [sweep[1.0][k] for k in ("precision", "recall", "f1")] == [0.0, 0.0, 0.0]
    assert con.execute("SELECT roc_auc FROM rel_auc").fetchone()[0] == 0.9444444444444444
    out = tmp_path / "out"
    metrics.export(wh, [], str(out))
    best = read_csv(out / "scoring_summary.csv")[0]
    assert [(best["best_%s" % m], best["best_%s_threshold" % m]) for m in
            ("mcc", "f1", "balanced_accuracy", "precision", "recall")] == [
        ("0.7071", "0.3"), ("0.8571", "0.3"), ("0.8333", "0.3"), ("1.0", "0.5"), ("1.0", "0.0")]
    assert best["roc_auc_macro"] == "0.9444"
    swept = read_csv(out / "threshold_sweep.csv")
    assert [r["threshold"] for r in swept][:3] == ["0.0", "1e-05", "3e-05"] and len(swept) == 19
    lb = read_csv(out / "leaderboard.csv")[0]   # original verdict = argmax: 0.4 < 0.6 is no, so tp 2
    assert (lb["tp"], lb["fp"], lb["tn"], lb["fn"], lb["unparsed"]) == ("2", "0", "3", "1", "0")


@pytest.mark.slow
def test_export_is_byte_stable_and_refuses_mixed_benchmarks(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T82)
    write_language(tmp_path / "data", "de", list(reversed(T82)))
    wh = Warehouse(tmp_path / "wh")
    bench(wh, tmp_path / "data", "scripted-scorer")
    bench(wh, tmp_path / "data", "scripted-generator")
    a, b = tmp_path / "a", tmp_path / "b"
    metrics.export(wh, [], str(a))
    metrics.export(wh, [], str(b))
    for name in metrics.CSVS:
        data = (a / ("%s.csv" % name)).read_bytes()
        assert data == (b / ("%s.csv" % name)).read_bytes() and b"\r" not in data and data.endswith(b"\n")
    write_language(tmp_path / "other", "en", T82[:4])
    bench(wh, tmp_path / "other", "scripted-scorer", name="other", run_id="other")
    with pytest.raises(UsageError, match="different benchmark SHA-256"):
        metrics.export(wh, [], str(tmp_path / "c"))


@pytest.mark.slow
def test_finished_pairs_are_not_redone(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T82)
    write_language(tmp_path / "data", "de", T82)
    wh = Warehouse(tmp_path / "wh")
    first = bench(wh, tmp_path / "data", "scripted-scorer", langs=["en"])
    assert [(p.run_id, p.status) for p in first] == [("rel-scripted-scorer-en", "committed")]
    again = bench(wh, tmp_path / "data", "scripted-scorer")
    assert [(p.language, p.status) for p in again] == [("de", "committed"), ("en", "done")]
    assert sorted(wh.run_ids()) == ["rel-scripted-scorer-de", "rel-scripted-scorer-en"]
    write_language(tmp_path / "data", "en", T82[:4])       # another benchmark under the same run id
    with pytest.raises(UsageError, match="another benchmark"):
        bench(wh, tmp_path / "data", "scripted-scorer")


# ---------------------------------------------------------------------------- --pick-on
@pytest.mark.slow
def test_pick_on_applies_a_threshold_from_one_run_to_another(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T82)
    write_language(tmp_path / "data", "de", [("yes", "0.9"), ("yes", "0.25"), ("no", "0.35"), ("no", "0.1")])
    wh = Warehouse(tmp_path / "wh")
    bench(wh, tmp_path / "data", "scripted-scorer")
    out = tmp_path / "out"
    paths = metrics.export(wh, [], str(out), pick_on="rel-scripted-scorer-en")
    assert paths[-1].endswith("operating_points.csv")
    (row,) = read_csv(out / "operating_points.csv")
    # picked on en: best F1 0.8571 at 0.3; de at 0.3: tp 1, fp 1, fn 1 -> F1 0.5; de's own best: F1 0.8 at 0.2
    assert (row["run_id"], row["picked_on"], row["picked_threshold"], row["picked_on_value"]) == (
        "rel-scripted-scorer-de", "rel-scripted-scorer-en", "0.3", "0.8571")
    assert (row["value_at_picked"], row["in_sample_threshold"], row["in_sample_value"], row["optimism"]) == (
        "0.5", "0.2", "0.8", "0.3")
    metrics.export(wh, [], str(tmp_path / "split"), pick_on="langs:de")
    (row,) = read_csv(tmp_path / "split" / "operating_points.csv")
    assert (row["language"], row["picked_threshold"], row["optimism"]) == ("en", "0.2", "0.1071")
    with pytest.raises(UsageError, match="--pick-on nope: no such run"):
        metrics.export(wh, [], str(out), pick_on="nope")
    # a dev split: its run is outside the compared runs (another benchmark SHA-256 for en), picked on all the same
    write_language(tmp_path / "dev", "en", [("yes", "0.95"), ("yes", "0.65"), ("no", "0.6"), ("no", "0.1")])
    bench(wh, tmp_path / "dev", "scripted-scorer", run_id="dev")
    main = ["rel-scripted-scorer-de", "rel-scripted-scorer-en"]
    metrics.export(wh, main, str(tmp_path / "dev-out"), pick_on="dev-en")
    rows = read_csv(tmp_path / "dev-out" / "operating_points.csv")
    # dev's best F1: 0.8 from 0.2 to 0.6 (0.95, 0.65, 0.6 are yes: tp 2, fp 1), the lowest wins
    assert [(r["run_id"], r["picked_on"], r["picked_threshold"]) for r in rows] == [
        ("rel-scripted-scorer-de", "dev-en", "0.2"), ("rel-scripted-scorer-en", "dev-en", "0.2")]
    with pytest.raises(UsageError, match="several runs for language en"):
        metrics.export(wh, main + ["dev-en"], str(tmp_path / "mixed"))


# ---------------------------------------------------------------------------- leaderboard rank groups
def test_rank_groups_rule():
    diff = {("a", "b"): False, ("a", "c"): True, ("b", "c"): False, ("c", "d"): False, ("a", "d"): True}
    sig = lambda x, y: diff.get((x, y), diff.get((y, x), True))    # noqa: E731
    assert board.groups(["a", "b", "c", "d"], sig) == {"a": 1, "b": 1, "c": 2, "d": 2}
    assert board.groups(["a"], sig) == {"a": 1}


@pytest.mark.slow
def test_leaderboard_ties_equal_models_and_separates_a_much_better_one(tmp_path, scripted):
    good = [("yes", "0.9"), ("no", "0.1")] * 40
    write_language(tmp_path / "good", "en", good)
    write_language(tmp_path / "bad", "en", [(lab, "0.1" if s == "0.9" else "0.9") for lab, s in good])
    wh = Warehouse(tmp_path / "wh")
    for name in ("good1", "good2"):
        bench(wh, tmp_path / "good", "scripted-scorer", name=name, run_id=name)
    bench(wh, tmp_path / "bad", "scripted-scorer", name="bad", run_id="bad")
    with pytest.raises(UsageError, match="different benchmark"):     # the bad run's sentences differ
        board.leaderboard(wh)
    # same items (benchmark) but a worse model: flip every verdict through a different double
    result = board.leaderboard(wh, ["good1-en", "good2-en"])
    assert [(r["model_id"], r["group"], r["position"]) for r in result["rows"]] == [("good1", 1, 1), ("good2", 1, 2)]
    assert result["rows"][0]["tied_with"] == "good2"
    assert "| group | position | model_id |" in board.markdown(result)


@pytest.mark.slow
def test_leaderboard_separates_significantly_different_models(tmp_path, scripted):
    class Inverted(ScriptedScorer):
        name = "scripted-inverted"

        def predict_batch(self, states, questions, **kwargs):
            flipped = [dict(s, sentence=str(round(1 - float(s["sentence"]), 6))) for s in states]
            return ScriptedScorer.predict_batch(self, flipped, questions)

    registry.register("scripted-inverted", Inverted)
    try:
        write_language(tmp_path / "d", "en", [("yes", "0.9"), ("no", "0.1"), ("yes", "0.8"), ("no", "0.3")] * 20)
        wh = Warehouse(tmp_path / "wh")
        bench(wh, tmp_path / "d", "scripted-scorer", name="right")
        bench(wh, tmp_path / "d", "scripted-inverted", name="wrong")
        rows = board.leaderboard(wh)["rows"]
        assert [(r["model_id"], r["group"], r["f1_macro"]) for r in rows] == [("right", 1, 1.0), ("wrong", 2, 0.0)]
        assert rows[0]["rank_ci_low"] == rows[0]["rank_ci_high"] == 1.0
        mc = read_mcnemar(wh)
        assert mc == {"rel-right-en": None, "rel-wrong-en": (80, 0)}
    finally:
        registry.unregister("scripted-inverted")


def read_mcnemar(wh: Warehouse):
    con = metrics.connect(wh)
    return {r[0]: (None if r[1] is None else (r[2], r[3]))
            for r in con.execute("SELECT run_id, mcnemar_p, b, c FROM rel_mcnemar").fetchall()}


# ---------------------------------------------------------------------------- bad input
def _invoke(*args: str):
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("text,message", [("   \n", "blank"), ("no placeholder here", "no {} placeholder")])
def test_template_without_placeholder_is_refused_before_any_model(tmp_path, text, message):
    write_language(tmp_path / "data", "en", T82)
    template = tmp_path / "t.txt"
    template.write_text(text)
    result = _invoke("relevance", "run", "--data", str(tmp_path / "data"), "--model", "smollm2", "--template",
                     str(template), "-w", str(tmp_path / "wh"))
    assert result.exit_code == 2 and message in result.output and not (tmp_path / "wh").exists()


def test_bad_label_names_file_row_and_field(tmp_path, scripted):
    write_language(tmp_path / "data", "de", T82)           # read first, fine: nothing of it is written either
    write_language(tmp_path / "data", "en", [("yes", "0.1"), ("maybe", "0.2")])
    with pytest.raises(UsageError, match=r"en.jsonl row 2 field 'label_text': expected 'yes' or 'no', got 'maybe'"):
        bench(Warehouse(tmp_path / "wh"), tmp_path / "data", "scripted-scorer")
    assert not (tmp_path / "wh").exists()


def test_template_is_refused_for_a_runner_without_prompt(tmp_path, scripted):
    write_language(tmp_path / "data", "en", T82)
    (tmp_path / "t.txt").write_text("Q: {}")
    with pytest.raises(UsageError, match="reads no prompt"):
        bench(Warehouse(tmp_path / "wh"), tmp_path / "data", "scripted-scorer", template=str(tmp_path / "t.txt"))


class PromptedScorer(ScriptedScorer):
    """An LM runner double (a CausalLMRunner by class, so the benchmark hands it a prompt): it reads the
    template it is given as the LM runners do and records its digest, and scores as ScriptedScorer."""

    name = "prompted-scorer"

    def __init__(self, prompt=None, **kwargs: Any):
        from laya_cases.runners import hf_common as H

        _text, sha, where = H.read_template(prompt, H.YESNO_TEMPLATE)
        self.info = RunnerInfo(runner=self.name, model_id="prompted",
                               settings={"prompt_sha256": sha, "prompt_template": where})


@pytest.mark.slow                       # reads the language through Hugging Face `datasets` (its import)
@pytest.mark.parametrize("given", [False, True])
def test_a_run_that_prompts_reads_the_benchmarks_template_unless_told_otherwise(tmp_path, given):
    """S8.2: the benchmark's data/relevance/prompt.txt is the default (not a runner's built-in text), and
    its SHA-256 is recorded for every prompting run; --template replaces it."""
    import hashlib
    from laya_cases.runners.hf_base import CausalLMRunner
    from laya_cases.query.sql import connect

    write_language(tmp_path / "data", "en", T82)
    mine = tmp_path / "mine.txt"
    mine.write_text("Judge: {}\n")
    cls = type("PromptedLM", (PromptedScorer, CausalLMRunner), {"capabilities": ScriptedScorer.capabilities})
    registry.register(PromptedScorer.name, cls)
    try:
        bench(Warehouse(tmp_path / "wh"), tmp_path / "data", PromptedScorer.name,
              **({"template": str(mine)} if given else {}))
    finally:
        registry.unregister(PromptedScorer.name)
    (settings,) = connect(Warehouse(tmp_path / "wh")).execute("SELECT settings_json FROM runs").fetchone()
    facts = json.loads(settings)["relevance"]
    read = mine if given else ROOT / "data" / "relevance" / "prompt.txt"
    assert facts["prompt_sha256"] == hashlib.sha256(read.read_text(encoding="utf-8").encode("utf-8")).hexdigest()
    assert Path(facts["prompt_template"]).resolve() == read.resolve()
    if not given:
        assert facts["prompt_sha256"].startswith("c75f6e")      # the benchmark's file, as the issue recorded it


@pytest.mark.slow                       # reads the languages through Hugging Face `datasets`
def test_ids_are_named_as_the_benchmark_names_them(tmp_path, scripted):
    """S8.1 / the benchmark's ADR-0004: `source_item_id` is the language-neutral id (the manifest's fields joined
    by `:`), `item_id` = <language>/<source_item_id> is unique across languages; both are decision columns."""
    import random
    from laya_cases.query.sql import connect

    rng = random.Random(5)
    items = [(rng.choice(["yes", "no"]), "%.2f" % rng.random()) for _ in range(7)]
    for lang in ("en", "de", "zh-CN"):
        write_language(tmp_path / "data", lang, items)
    bench(Warehouse(tmp_path / "wh"), tmp_path / "data", "scripted-scorer")
    got = connect(Warehouse(tmp_path / "wh")).execute(
        "SELECT language_key, item_id, source_item_id, expected_json FROM cases ORDER BY language_key, row_index"
    ).fetchall()
    want = sorted((lang, "%s/q%d:p" % (lang, i), "q%d:p" % i, "true" if label == "yes" else "false")
                  for lang in ("en", "de", "zh-CN") for i, (label, _) in enumerate(items))
    assert sorted(got) == want
    assert len({r[1] for r in got}) == 21 and len({r[2] for r in got}) == 7
    joined = connect(Warehouse(tmp_path / "wh")).execute(      # the cross-language join the neutral id is for
        "SELECT count(*) FROM cases a JOIN cases b USING (source_item_id) "
        "WHERE a.language_key = 'en' AND b.language_key = 'de' AND a.expected_json = b.expected_json").fetchone()
    assert joined == (7,)


def test_manifest_languages_and_errors(tmp_path):
    from laya_cases.harness.relevance import manifest as M

    write_language(tmp_path / "root" / "set", "en", T82)
    doc = {"format": M.FORMAT, "name": "mini", "root": "set", "languages": [{"language": "en", "path": "en.jsonl"}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    inv = M.inventory(M.load_manifest(str(path), str(tmp_path / "root")))
    assert inv == [{"language": "en", "rows": 6, "yes": 3, "no": 3, "yes_share": 0.5,
                    "source": str(tmp_path / "root" / "set" / "en.jsonl")}]
    path.write_text(json.dumps(dict(doc, languages=[{"language": "en"}])))
    with pytest.raises(UsageError, match=r"languages\[0\]: needs `path`"):
        M.load_manifest(str(path))
    result = _invoke("relevance", "languages", "--data", str(tmp_path / "root" / "set"))
    assert result.exit_code == 0 and "en" in result.output and "0.5000" in result.output
    path.write_text(json.dumps(dict(doc, languages=[{"language": "sw", "hub": "org/none", "split": "test"}])))
    result = _invoke("relevance", "languages", "--manifest", str(path))      # offline: one line, exit 2
    assert result.exit_code == 2 and "language sw: hub:org/none cannot be loaded" in result.output


def test_a_tie_between_yes_and_no_is_no_and_a_missing_score_is_unparsed(tmp_path, scripted):
    write_language(tmp_path / "data", "en", [("yes", "0.5"), ("no", "0.5"), ("yes", "none"), ("no", "0.6")])
    wh = Warehouse(tmp_path / "wh")
    bench(wh, tmp_path / "data", "scripted-scorer")
    con = metrics.connect(wh)
    got = con.execute("SELECT c.predicted, i.verdict FROM rel_items i JOIN cases c USING (run_id, row_index) "
                      "ORDER BY row_index").fetchall()
    # the stored noul answer says true at 0.5 (and false without a value, S2); the S8.5 verdict is no, and none
    assert got == [("true", False), ("true", False), ("false", None), ("true", True)]
    row = metrics.S.rows(con.execute("SELECT * FROM rel_metrics"))[0]
    assert (row["tp"], row["fn"], row["tn"], row["fp"], row["unparsed"]) == (0, 1, 1, 1, 1)
    at0 = con.execute("SELECT tp, fn FROM rel_sweep WHERE threshold = 0").fetchone()
    assert at0 == (2, 0)                                          # the missing score reads 0.0 >= 0


@needs_shared_data("xquad_r_relevance")
def test_the_stored_manifest_lists_the_eleven_languages_of_source_md():
    from laya_cases.harness.relevance import manifest as M

    bench = M.load_manifest(str(ROOT / "data" / "relevance" / "xquad_r_relevance.json"), str(shared_data()))
    inv = {r["language"]: (r["rows"], r["yes"]) for r in M.inventory(bench)}
    want = {"ar": 288, "de": 286, "el": 288, "en": 288, "es": 288, "hi": 286, "ru": 286, "th": 280, "tr": 286,
            "vi": 288, "zh": 286}                                   # ../shared/data/xquad_r_relevance/SOURCE.md
    assert inv == {lang: (n, n // 2) for lang, n in want.items()}
    rows = M.dataset_rows(bench.languages[0], bench.instructions, limit=2)
    question = rows[0]["source_item_id"].split(":")[0]
    assert [r["source_item_id"] for r in rows] == [question + ":gold_answer_sentence",
                                                   question + ":adjacent_sentence_same_paragraph"]
    assert [r["item_id"] for r in rows] == ["ar/" + r["source_item_id"] for r in rows]
