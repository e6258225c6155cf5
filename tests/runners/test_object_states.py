"""Object states read as text by the embedding runners (rule `fields/1`, embedding.state_text)."""
from __future__ import annotations

import json
from typing import List, Sequence

import numpy as np
import pytest

from helpers import needs_shared_data, shared_data

from laya_cases.harness.massive import sampler as massive
from laya_cases.runners.embedding import STATE_RENDERING, EmbeddingRunner, state_text

needs_massive = needs_shared_data("massive", "test", "en-US.jsonl")


@pytest.mark.parametrize("state, text", [
    ("plain text", "plain text"),                                   # a string: unchanged
    ('{"utterance": "x"}', '{"utterance": "x"}'),                   # a string that looks like JSON: unchanged
    ({"utterance": "wake me up at five"}, "wake me up at five"),    # one field: its value
    ({"n": 3}, "3"),
    ({"u": None}, "null"),
    ({"u": {"a": [1, "é"]}}, '{"a":[1,"é"]}'),                      # nested: compact JSON, raw non-ASCII
    ({"subject": "Refund", "body": "Card charged twice", "meta": {"tier": 2}},
     "subject: Refund\nbody: Card charged twice\nmeta: {\"tier\":2}"),  # several: key: value lines, in order
    ({"b": "2", "a": "1"}, "b: 2\na: 1"),                           # the object's order, not sorted
    ({}, "{}"), ([1, "x"], '[1,"x"]'), (7, "7"), (None, "null"), (True, "true"),
])
def test_state_text_rule(state, text):
    assert state_text(state) == text


class _Recording(EmbeddingRunner):
    """Embeds a text as a hashed bag of characters and records every text it was asked for."""
    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.seen: List[str] = []

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for ch in text:
                out[i, ord(ch) % 64] += 1.0
            out[i] /= max(1e-9, float(np.linalg.norm(out[i])))
        return out


def test_single_field_state_answers_exactly_as_its_string():
    questions = {"q": {"type": "choice", "instructions": "pick", "criteria": {"alarm": "alarm set", "music": None}},
                 "s": {"type": "score", "instructions": "how", "criteria": ["low", "high"]}}
    texts = ["wake me up at five am", "play some jazz", "quiet"]
    runner = _Recording()
    as_strings = runner.predict_batch(texts, questions)
    as_objects = runner.predict_batch([{"utterance": t} for t in texts], questions)
    assert as_objects == as_strings
    assert [t for t in runner.seen if "{" in t] == []               # no braces reached the embedder
    old = runner.predict_batch([json.dumps({"utterance": t}, separators=(",", ":")) for t in texts], questions)
    assert old != as_strings                                        # the test can tell the two renderings apart


def _held_out(rows_from: int = 1000, rows_to: int = 1300):
    """MASSIVE en-US rows 1001-1300 with the harness's 20-option sampling (one seed-13 stream from row 1)."""
    records = massive.read_locale(shared_data("massive", "test", "en-US.jsonl"))
    labels = sorted({r["label"] for r in records})
    keys = massive.sample_keys(labels, [r["label"] for r in records[:rows_to]], 20, 13)
    return [(r["text"], r["label"], k) for r, k in zip(records[rows_from:rows_to], keys[rows_from:rows_to])]


def _accuracy(runner, states, cases) -> float:
    right = 0
    for state, (_, gold, keys) in zip(states, cases):
        body = {"type": "choice", "instructions": massive.INSTRUCTIONS,
                "criteria": {k: massive.option_text(k) for k in keys}}
        right += runner.predict_batch([state], {"intent": body})[0]["answers"]["intent"]["choice"] == gold
    return right / len(cases)


@pytest.mark.slow
@needs_massive
def test_minilm_object_state_accuracy_equals_string_state_on_massive_held_out():
    from laya_cases.runners.minilm import MiniLMRunner

    cases = _held_out()
    assert len(cases) == 300
    runner = MiniLMRunner()
    assert runner.info.settings["state_rendering"] == STATE_RENDERING == "fields/1"
    as_string = _accuracy(runner, [t for t, _, _ in cases], cases)
    as_object = _accuracy(runner, [{"utterance": t} for t, _, _ in cases], cases)
    as_json = _accuracy(runner, [json.dumps({"utterance": t}, separators=(",", ":")) for t, _, _ in cases], cases)
    print("minilm en-US rows 1001-1300, 20 options: string %.4f object %.4f compact-JSON %.4f"
          % (as_string, as_object, as_json))
    assert as_string > 0.4                                          # well above chance (0.05)
    assert abs(as_object - as_string) <= 0.01
    assert as_json < as_string - 0.05                               # what the rule fixed
