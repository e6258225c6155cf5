"""Bootstrap intervals (S9.5) against a plain-Python re-implementation of the rule, and the exact
CPython index stream they are drawn from."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from helpers import write_jsonl
from laya_cases.report import build as R
from laya_cases.record.ingest.answers import ingest
from laya_cases.query import resample
from laya_cases.query.resample import IndexStream, randrange_stream, replicate_batches, replicate_weights
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect


@pytest.mark.parametrize("seed", [0, 7, 2 ** 40 + 3])
@pytest.mark.parametrize("n", [1, 2, 3, 10, 1000, 65537])
def test_index_stream_is_cpython_randrange(seed, n):
    rng = random.Random(seed)
    assert randrange_stream(seed, n, 3000).tolist() == [rng.randrange(n) for _ in range(3000)]


def _rows(k, seed=3):
    """k dataset rows, two questions each, ties in confidence, two languages."""
    rng = random.Random(seed)
    body = {"intent": {"type": "choice", "instructions": "i", "criteria": ["a", "b", "c"]},
            "spam": {"type": "noul", "instructions": "s"}}
    out = []
    for i in range(k):
        gold = rng.choice("abc")
        pred = gold if rng.random() < 0.6 else rng.choice("abc")
        p = rng.choice([0.2, 0.4, 0.6, 0.8])
        out.append({"state": i, "questions": body, "expected": {"intent": gold, "spam": rng.random() < 0.5},
                    "language": rng.choice(["en", "de"]),
                    "answers": {"intent": {"type": "choice", "choice": pred, "answer_confidence": rng.choice([0.5, 0.7, 0.9])},
                                "spam": {"type": "noul", "noul": p, "answer_confidence": max(p, 1 - p)}}})
    return out


def _lerp_quantile(values, p):
    s = sorted(values)
    pos = (len(s) - 1) * p
    lo = int(np.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    t = pos - lo
    return s[hi] - (s[hi] - s[lo]) * (1 - t) if t >= 0.5 else s[lo] + (s[hi] - s[lo]) * t


def _python_interval(rows, B, seed, keep, metric):
    """S9.5 by hand: resample rows with random.Random(seed).randrange, replicate by replicate."""
    rng = random.Random(seed)
    values = []
    for _ in range(B):
        sample = [rows[rng.randrange(len(rows))] for _ in range(len(rows))]
        cases = [(r, q) for r in sample if keep(r) for q in r["expected"]]
        if metric == "choice_accuracy":
            hits = [r["answers"]["intent"]["choice"] == r["expected"]["intent"] for r, q in cases if q == "intent"]
        else:
            hits = [(r["answers"]["spam"]["noul"] >= 0.5) == r["expected"]["spam"] for r, q in cases if q == "spam"]
        if hits:
            values.append(sum(hits) / len(hits))
    return len(values), _lerp_quantile(values, 0.025), _lerp_quantile(values, 0.975)


@pytest.mark.slow
def test_s9_5_intervals_match_the_rule_overall_and_per_slice(tmp_path):
    rows = _rows(40)
    wh = Warehouse(tmp_path / "wh")
    rid = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", rows)), run_id="boot").run_id
    doc = R.build(connect(wh, [rid]), rid, R.Options(bootstrap=300, seed=5))
    for group, keep in ((doc["extensions"]["overall"], lambda r: True),
                        (doc["extensions"]["slices"]["language"]["de"], lambda r: r["language"] == "de")):
        for metric in ("choice_accuracy", "noul_accuracy"):
            ci = group[metric]["ci"]
            used, lo, hi = _python_interval(rows, 300, 5, keep, metric)
            assert (ci["B_used"], ci["lower"], ci["upper"]) == (used, lo, hi), metric
            assert ci["lower"] <= doc["overall"][metric] or group is not doc["extensions"]["overall"]
    # point estimates never change (S9.5)
    plain = R.build(connect(wh, [rid]), rid, R.Options())
    assert plain["overall"] == doc["overall"] and plain["slices"] == doc["slices"]


def _curve_rows(k, seed=9):
    """k dataset rows whose confidences are mostly distinct (full precision) and partly tied, some with a
    repeated tag (a case counts twice in its tag group, S4.1)."""
    rng = random.Random(seed)
    body = {"intent": {"type": "choice", "instructions": "i", "criteria": ["a", "b"]},
            "spam": {"type": "noul", "instructions": "s"}}
    out = []
    for i in range(k):
        gold = rng.choice("ab")
        tied = rng.random() < 0.3
        out.append({"state": i, "questions": body, "expected": {"intent": gold, "spam": rng.random() < 0.5},
                    "tags": rng.choice([[], ["x"], ["x", "x"]]),
                    "answers": {"intent": {"type": "choice", "choice": gold if rng.random() < 0.7 else "ab"[gold == "a"],
                                           "answer_confidence": rng.choice([0.5, 0.75]) if tied else rng.random()},
                                "spam": {"type": "noul", "noul": rng.random(),
                                         "answer_confidence": 0.75 if tied else rng.random()}}})
    return out


def _curve_cases(sample, times):
    """(confidence, correct) of every case of the sampled rows, each `times(row)` times."""
    out = []
    for r in sample:
        a = r["answers"]
        cases = [(a["intent"]["answer_confidence"], a["intent"]["choice"] == r["expected"]["intent"]),
                 (a["spam"]["answer_confidence"], (a["spam"]["noul"] >= 0.5) == r["expected"]["spam"])]
        out += cases * times(r)
    return out


def _selective(cases, coverage):
    """S3.13 by hand: the cut takes the whole level holding the k-th most confident case."""
    ranked = sorted(cases, key=lambda c: -c[0])
    k = max(1, math.ceil(coverage * len(ranked)))
    accepted = [c for c in ranked if c[0] >= ranked[k - 1][0]]
    return sum(ok for _, ok in accepted) / len(accepted)


def _aurc(cases):
    """S3.14 by hand: each level's risk over the cases accepted so far, weighted by the level's cases, over N."""
    total, accepted, hits = 0.0, 0, 0
    for conf in sorted({c for c, _ in cases}, reverse=True):
        level = [ok for c, ok in cases if c == conf]
        accepted, hits = accepted + len(level), hits + sum(level)
        total += (1 - hits / accepted) * len(level)
    return total / len(cases)


def test_s9_5_curve_intervals_match_the_rule_with_distinct_and_tied_confidences_and_a_repeated_tag(tmp_path):
    """level_cells (pipeline and bootstrap) by hand: AURC and selective accuracy, and the selective-accuracy
    intervals, overall and in a tag group whose rows name the tag once or twice, over confidences mostly
    distinct and partly tied."""
    rows, B, seed = _curve_rows(30), 120, 4
    wh = Warehouse(tmp_path / "wh")
    rid = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", rows)), run_id="boot").run_id
    doc = R.build(connect(wh, [rid]), rid, R.Options(bootstrap=B, seed=seed))
    groups = ((doc["overall"], doc["extensions"]["overall"], lambda r: 1),
              (doc["slices"]["tag"]["x"], doc["extensions"]["slices"]["tag"]["x"], lambda r: r["tags"].count("x")))
    for values, extensions, times in groups:
        assert values["aurc"] == pytest.approx(_aurc(_curve_cases(rows, times)), abs=1e-12)
        for coverage in (0.5, 0.8):
            name = "selective_accuracy@%d" % round(coverage * 100)
            assert values[name] == _selective(_curve_cases(rows, times), coverage), name
            rng, replicates = random.Random(seed), []
            for _ in range(B):
                cases = _curve_cases([rows[rng.randrange(len(rows))] for _ in range(len(rows))], times)
                if cases:
                    replicates.append(_selective(cases, coverage))
            ci = extensions[name]["ci"]
            assert (ci["B_used"], ci["lower"], ci["upper"]) == (
                len(replicates), _lerp_quantile(replicates, 0.025), _lerp_quantile(replicates, 0.975)), name


@pytest.mark.slow
def test_bootstrap_is_reproducible_and_seeded(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    rid = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", _rows(25))), run_id="boot").run_id
    a = R.dumps(R.build(connect(wh, [rid]), rid, R.Options(bootstrap=200, seed=1)))
    b = R.dumps(R.build(connect(wh, [rid]), rid, R.Options(bootstrap=200, seed=1)))
    c = R.dumps(R.build(connect(wh, [rid]), rid, R.Options(bootstrap=200, seed=2)))
    assert a == b and a != c


@pytest.mark.parametrize("bad", [1, 99, 100001, -5])
def test_bootstrap_range_is_checked(bad):
    with pytest.raises(Exception, match="--bootstrap"):
        R.check_bootstrap(bad)


def test_the_stream_taken_in_pieces_is_the_one_stream():
    stream = IndexStream(11, 1000)
    pieces = np.concatenate([stream.take(k) for k in (1, 5, 0, 300, 7, 2000, 1)])
    rng = random.Random(11)
    assert pieces.tolist() == [rng.randrange(1000) for _ in range(len(pieces))]


@pytest.mark.parametrize("batch_draws", [1, 7, 100, 10 ** 6])
def test_replicate_batches_are_the_replicates_of_the_whole_stream(batch_draws):
    n, b, seed = 37, 50, 4
    draws = randrange_stream(seed, n, n * b).reshape(b, n)
    got = {}
    for first, last, replicate, position, multiplicity in replicate_batches(seed, n, b, batch_draws):
        assert set(replicate.tolist()) <= set(range(first, last))
        for r, p, m in zip(replicate.tolist(), position.tolist(), multiplicity.tolist()):
            got[(r, p)] = m
    want = {(r, p): int(m) for r in range(b) for p, m in enumerate(np.bincount(draws[r], minlength=n)) if m}
    assert got == want
    assert sorted(zip(*[a.tolist() for a in replicate_weights(seed, n, b)[:2]])) == sorted(want)


@pytest.mark.parametrize("count_as_drawn", [1, 1 << 40])
@pytest.mark.parametrize("n, n_classes", [(1, 1), (2, 2), (37, 3), (1000, 5), (1025, 300), (4096, 1)])
def test_class_counts_are_the_stream_counted_per_class(n, n_classes, count_as_drawn, monkeypatch):
    """Either way of counting (as drawn, with words drawn ahead on a thread in chunks smaller than a
    replicate; or from the index stream's batches) gives each replicate's draws counted per class."""
    monkeypatch.setattr(resample, "COUNT_AS_DRAWN", count_as_drawn)
    monkeypatch.setattr(resample._Words, "CHUNK", 333)
    b, seed = 23, 5
    classes = np.random.default_rng(n).integers(0, n_classes, n)
    rng = random.Random(seed)
    want = np.zeros((b, n_classes), dtype=np.int64)
    for r in range(b):
        for _ in range(n):
            want[r, classes[rng.randrange(n)]] += 1
    got = np.zeros_like(want)
    for first, last, counts in resample.class_counts(seed, n, b, classes, n_classes):
        assert counts.shape == (last - first, n_classes) and counts.dtype == np.int64
        got[first:last] = counts
    assert (got == want).all() and (got.sum(axis=1) == n).all()


@pytest.mark.slow
def test_batched_bootstrap_equals_one_batch_and_reports_progress(tmp_path, monkeypatch):
    wh = Warehouse(tmp_path / "wh")
    rid = ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", _rows(25))), run_id="boot").run_id
    whole = R.dumps(R.build(connect(wh, [rid]), rid, R.Options(bootstrap=150, seed=3)))
    monkeypatch.setattr(resample, "BATCH_DRAWS", 25 * 40)          # 40 replicates a batch: 4 batches
    seen = []
    batched = R.dumps(R.build(connect(wh, [rid]), rid, R.Options(bootstrap=150, seed=3,
                                                                progress=lambda done, total: seen.append((done, total)))))
    assert batched == whole
    assert seen == [(40, 150), (80, 150), (120, 150), (150, 150)]
