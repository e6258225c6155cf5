"""Synthetic decisions for benchmarks: ties, several languages, models, tags and question types.

Written straight into a warehouse partition as Arrow (the schema a real run writes), so the
benchmark times the report, not JSON parsing. Confidences are rounded to 4 decimals, as the
reference's model answers are (S2.4), which gives realistic ties; `distinct=True` keeps them at full
precision (scoring models, other tools), so nearly every confidence is its own level.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from laya_cases.store.schema import DECISION_SCHEMA, SCHEMA_VERSION
from laya_cases.store.warehouse import Warehouse

LANGUAGES = np.array(["en", "de", "fr", "es", "zh", "ja"])
MODELS = np.array(["english", "multilingual"])
QIDS = np.array(["intent", "spam", "urgency"])
TYPES = np.array(["choice", "noul", "score"])
TAG_SETS = [[], ["vip"], ["hard"], ["vip", "hard"]]


def decisions(n: int, seed: int = 0, distinct: bool = False) -> dict:
    """Column arrays for n decisions (numpy), plus the case dicts' raw fields for reference runs."""
    rng = np.random.default_rng(seed)
    q = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    conf = rng.beta(5, 2, size=n)
    if not distinct:
        conf = np.round(conf, 4)
    conf[rng.random(n) < 0.001] = np.nan                 # a few NaN confidences
    correct = rng.random(n) < conf                       # roughly calibrated
    err = np.abs(np.round(rng.normal(0, 0.6, size=n), 4))
    return {"q": q, "conf": conf, "correct": correct, "err": err,
            "lang": rng.choice(len(LANGUAGES), size=n), "model": rng.choice(len(MODELS), size=n),
            "tags": rng.choice(len(TAG_SETS), size=n, p=[0.7, 0.15, 0.1, 0.05])}


def to_batch(d: dict, start: int, stop: int) -> pa.RecordBatch:
    q = d["q"][start:stop]
    n = stop - start
    is_score = q == 2
    correct = pa.array(d["correct"][start:stop], mask=is_score)
    tag_idx = d["tags"][start:stop]
    lengths = np.array([len(t) for t in TAG_SETS])[tag_idx]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    flat = [tag for i in tag_idx for tag in TAG_SETS[i]]
    columns = {
        "case_id": pa.array(np.char.add("c", np.arange(start, stop).astype(str))),
        "row_index": pa.array(np.arange(start, stop)), "line_no": pa.array(np.arange(start, stop) + 1),
        "qid": pa.array(QIDS[q]), "qid_pos": pa.array(np.zeros(n, dtype=np.int64)),
        "question_type": pa.array(TYPES[q]), "answer_type": pa.array(TYPES[q]),
        "expected_json": pa.array(np.full(n, '"x"')), "expected_kind": pa.array(np.full(n, "string")),
        "answer_json": pa.array(answer_texts(d, start, stop)),
        "language": pa.array(np.char.add(np.char.add('"', LANGUAGES[d["lang"][start:stop]]), '"')),
        "model": pa.array(np.char.add(np.char.add('"', MODELS[d["model"][start:stop]]), '"')),
        "confidence": pa.array(d["conf"][start:stop]),
        "confidence_source": pa.array(np.full(n, "answer_confidence")),
        "gate_confidence": pa.array(d["conf"][start:stop]),
        "correct": correct,
        "score_mae": pa.array(d["err"][start:stop], mask=~is_score),
        "language_key": pa.array(LANGUAGES[d["lang"][start:stop]]),
        "model_key": pa.array(MODELS[d["model"][start:stop]]),
        "tags": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.string())),
        # the dense combination id a writer assigns (decisions.DecisionBuffer does it for real runs)
        "slice_set": pa.array((((d["lang"][start:stop] * len(MODELS) + d["model"][start:stop]) * len(QIDS) + q)
                               * len(TAG_SETS) + tag_idx) * 3 + np.where(is_score, 2, d["correct"][start:stop])),
        "call_id": pa.array(np.arange(start, stop)), "call_ms": pa.array(np.round(5 + np.arange(n) % 7 * 0.5, 3)),
        "chunk_size": pa.array(np.ones(n, dtype=np.int64)), "call_returned": pa.array(np.ones(n, dtype=bool)),
    }
    if "predicted" in d:                                 # optional: an answer text per decision
        columns["predicted"] = pa.array(d["predicted"][start:stop])
    arrays = [_array(columns[f.name]).cast(f.type) if f.name in columns else pa.nulls(n, f.type) for f in DECISION_SCHEMA]
    return pa.RecordBatch.from_arrays(arrays, schema=DECISION_SCHEMA)


def answer_texts(d: dict, start: int, stop: int) -> list:
    """answer_json as a recorded answer stores it (what `report --json` re-renders per case)."""
    def r(x: float) -> str:
        return "NaN" if x != x else repr(x)

    out = []
    for q, conf, ok, err in zip(d["q"][start:stop].tolist(), d["conf"][start:stop].tolist(),
                                d["correct"][start:stop].tolist(), d["err"][start:stop].tolist()):
        if q == 0:
            out.append('{"type": "choice", "choice": "%s", "probabilities": {"a": %s, "b": %s}, '
                       '"answer_confidence": %s}' % ("a" if ok else "b", r(conf), r(1 - conf), r(conf)))
        elif q == 1:
            out.append('{"type": "noul", "noul": %s, "confidence": %s}' % (r(conf if ok else 1 - conf), r(conf)))
        else:
            out.append('{"type": "score", "score": %s, "answer_confidence": %s}' % (r(err), r(conf)))
    return out


def answers_rows(n_rows: int, seed: int = 0):
    """Rows of a recorded-answers file (S1 dataset rows plus `answers`), three questions each, with
    full-precision confidences: what `ingest` reads."""
    rng = np.random.default_rng(seed)
    bodies = {"intent": {"type": "choice", "instructions": "What does the customer want?",
                         "criteria": {"refund": "money back", "cancel": "cancel an order", "other": "anything else"}},
              "spam": {"type": "noul", "instructions": "Is this spam?"},
              "urgency": {"type": "score", "instructions": "How urgent, 0-2?", "criteria": ["low", "mid", "high"]}}
    conf = rng.beta(5, 2, size=(n_rows, 3)).tolist()
    pick = rng.integers(0, 3, size=n_rows).tolist()
    lang = rng.integers(0, len(LANGUAGES), size=n_rows).tolist()
    labels = ["refund", "cancel", "other"]
    for i in range(n_rows):
        c = conf[i]
        yield {"state": "message %d: my order never arrived" % i, "questions": bodies,
               "expected": {"intent": labels[pick[i]], "spam": i % 7 == 0, "urgency": i % 3},
               "language": str(LANGUAGES[lang[i]]), "tags": TAG_SETS[i % 4],
               "answers": {"intent": {"type": "choice", "choice": labels[(pick[i] + (c[0] < 0.6)) % 3],
                                      "probabilities": {"refund": c[0], "cancel": 1 - c[0], "other": 0.0},
                                      "answer_confidence": c[0]},
                           "spam": {"type": "noul", "noul": 1 - c[1], "confidence": c[1]},
                           "urgency": {"type": "score", "score": 2 * c[2], "answer_confidence": c[2]}},
               "latency_ms": 12.5}


def _array(a):
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def write_run(wh: Warehouse, run_id: str, d: dict, chunk: int = 1 << 20) -> None:
    n = len(d["q"])
    with wh.stage(run_id) as staged:
        for start in range(0, n, chunk):
            staged.write(to_batch(d, start, min(n, start + chunk)))
        staged.commit({"schema_version": SCHEMA_VERSION, "created_at": "synthetic", "kind": "ingest",
                       "dataset": "synthetic", "questions_sha256": "synthetic", "runner": "synthetic",
                       "n_rows": n, "n_cases": n, "n_errors": 0,
                       "config_json": '{"schema": "laya-evals-report/1", "coverage_metric_definition": 2}',
                       "settings_json": "{}"})
