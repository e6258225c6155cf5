"""The spec's worked examples (T*) as tests, through the real path: answers JSONL -> ingest ->
warehouse -> sql/ -> report.build. Expected values are the reference's (semantics.md, fixtures/).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from fractions import Fraction

import pytest

from helpers import SPEC_FIXTURES, fixture_rows, record_to_row
from inprocess import cli
from laya_cases.core.errors import UsageError
from laya_cases.core import dataset as D
from laya_cases.core import identity as I
from laya_cases.report import build as R
from laya_cases.query import sql as Q
from report_path import Store, close, report_diffs, same_bits
from laya_cases.query.sql import connect


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path)


def choice_rows(pairs, **extra):
    """(confidence, correct) pairs as one-case choice rows; None confidence means no field."""
    rows = []
    for i, (conf, ok) in enumerate(pairs):
        rec = {"qid": "q", "qtype": "choice", "gold": "a", "pred": "a" if ok else "b", **extra}
        if conf is not None:
            rec["answer_confidence"] = conf
        rows.append(record_to_row(i, rec))
    return rows


def expected(name):
    return json.loads((SPEC_FIXTURES / name).read_text())


def check_cases(doc, ref_cases):
    """The reference `cases` list, field by field, in row order (S4.4)."""
    assert len(doc["cases"]) == len(ref_cases)
    for ours, ref in zip(doc["cases"], ref_cases):
        for key in ("qid", "language", "model", "tags", "expected", "correct"):
            assert ours[key] == ref[key], (key, ours, ref)
        assert same_bits(ours["confidence"], ref["confidence"]) or ours["confidence"] == ref["confidence"]
        assert set(ours["scores"]) == set(ref["scores"])
        for name, value in ref["scores"].items():
            assert value is None and ours["scores"][name] is None or same_bits(ours["scores"][name], value)


def overall_cut(doc, name):
    return doc["extensions"]["overall"][name]


def reliability_total(entries):
    """S9.4: contributions summed left to right in bin order, empty bins skipped."""
    total = 0.0
    for entry in entries:
        if entry["contribution"] is not None:
            total += entry["contribution"]
    return total


# ------------------------------------------------------------------------------------ T3.1
def test_t3_1_ties_matches_reference_overall_and_every_slice(store):
    """T3.1 / S0.1: ties.json with score_within 0.5 equals the reference report."""
    ref = expected("ties.expected.json")
    doc = store.report(fixture_rows("ties.json"), score_within=[0.5], coverages=[0.3])
    assert report_diffs(doc, ref["overall"], ref["slices"]) == []
    assert "model" not in doc["slices"]                               # no case has a model (S4.2)
    check_cases(doc, ref["cases"])


def test_t3_1_ties_hand_values_and_exact_sums(store):
    """T3.1 by hand; S9.8: brier and aurc are exactly rounded sums over one division."""
    doc = store.report(fixture_rows("ties.json"), score_within=[0.5])
    o = doc["overall"]
    assert o["choice_accuracy"] == 4 / 6 and o["noul_accuracy"] == 2 / 3
    assert same_bits(o["score_mae"], 0.3999999999999999)
    assert o["mean_confidence"] == 0.755 and o["score_within_0.5"] == 1.0
    assert o["ece"] == 0.2888888888888889
    # S9.8 as written: fsum of the binary64 squared terms, one division. That is ...447 (the
    # reference's value too); the spec's "exact-sum ...444" is the exact rational of unrounded
    # squares (or the reference over reversed input), not fsum semantics -- a spec inconsistency.
    paired = [(1.0, 1), (0.9, 1), (0.9, 0), (0.9, 1), (0.8, 1), (0.7, 1), (0.7, 1), (0.6, 0), (0.5, 0)]
    assert o["brier"] == math.fsum((c - y) * (c - y) for c, y in paired) / 9 == 0.18444444444444447
    assert close(o["brier"], 0.18444444444444444)
    levels = [(1, 1, 1), (3, 4, 3), (1, 5, 4), (2, 7, 6), (1, 8, 6), (1, 9, 6)]   # rows, accepted, hits
    assert o["aurc"] == math.fsum((1.0 - h / a) * r for r, a, h in levels) / 9
    assert close(o["aurc"], 191 / 945)
    assert o["selective_accuracy@50"] == 0.8 and o["selective_accuracy@80"] == 0.75
    slices = doc["slices"]
    table = {("language", "de"): (Fraction(1, 9), Fraction(23, 150), 1, Fraction(1, 3), Fraction(11, 15)),
             ("language", "en"): (Fraction(29, 120), Fraction(1, 5), Fraction(1, 2), Fraction(3, 10),
                                  Fraction(107, 140)),
             ("qid", "intent"): (Fraction(77, 360), Fraction(39, 200), Fraction(2, 3), Fraction(1, 4),
                                 Fraction(49, 60)),
             ("tag", "hard"): (1, Fraction(1, 4), 0, Fraction(1, 2), Fraction(1, 2)),
             ("tag", "vip"): (Fraction(1, 4), Fraction(1, 8), Fraction(1, 2), Fraction(1, 4), Fraction(3, 4))}
    for (dim, key), (aurc, brier, acc, ece, mc) in table.items():
        group = slices[dim][key]
        assert close(group["aurc"], float(aurc)) and close(group["brier"], float(brier))
        assert group["choice_accuracy"] == float(acc) and close(group["ece"], float(ece))
        assert close(group["mean_confidence"], float(mc))
    assert slices["qid"]["urgency"] == {"mean_confidence": 0.55, "score_mae": 0.3999999999999999,
                                        "score_within_0.5": 1.0}


def test_t3_1_coverage_cuts_and_t9_1_counts(store):
    """T3.1 extra cut c = 0.3 and T9.1 (S9.2): N, k, accepted, hits, coverage_actual."""
    ref = expected("ties.expected.json")["extra"]
    doc = store.report(fixture_rows("ties.json"), coverages=[0.3])
    ext = doc["extensions"]
    s50, s80 = overall_cut(doc, "selective_accuracy@50"), overall_cut(doc, "selective_accuracy@80")
    assert (s50["N"], s50["k_requested"], s50["accepted"], s50["hits"]) == (9, 5, 5, 4)
    assert s50["coverage_actual"] == 5 / 9 and round(s50["coverage_actual"], 4) == 0.5556
    assert (s80["N"], s80["k_requested"], s80["accepted"], s80["hits"]) == (9, 8, 8, 6)
    cut = ext["overall"]["coverage"]["0.3"]
    assert (cut["N"], cut["k_requested"], cut["accepted"], cut["hits"]) == (9, 3, 4, 3)
    assert cut["selective_accuracy"] == 0.75 and cut["coverage_actual"] == 4 / 9
    assert round(cut["coverage_actual"], 4) == 0.4444 and cut["cut_confidence"] == 0.9
    assert "coverage" not in doc["overall"] and not any(k.startswith("coverage") for k in doc["overall"])
    en = ext["slices"]["language"]["en"]["coverage"]["0.3"]             # k = 2 lands in the 0.9 level
    assert (en["k_requested"], en["accepted"], en["selective_accuracy"]) == (2, 3, 2 / 3)
    # the reference's own counts (fixtures `extra`) for every group
    groups = [(("overall", ""), ref["overall"], ext["overall"])]
    groups += [((dim, key), ref["slices"][dim][key], ext["slices"][dim][key])
               for dim in ref["slices"] for key in ref["slices"][dim]]
    for where, theirs, ours in groups:
        if theirs["n_paired"] == 0:
            assert ours["ece"] == {"n": 0, "reason": "no_applicable_case"}, where
            continue
        assert ours["ece"]["n_paired"] == ours["brier"]["n_paired"] == theirs["n_paired"], where
        for cov, c in theirs["coverage_cuts"].items():
            mine = ours["selective_accuracy@%d" % round(float(cov) * 100)]
            assert (mine["k_requested"], mine["accepted"]) == (c["k_requested"], c["accepted"]), where
    levels = [(p["accepted"], p["cum_hits"]) for p in ext["overall"]["risk_coverage"]]
    assert levels == [(lv["accepted"], lv["hits"]) for lv in ref["overall"]["levels"]]


# ------------------------------------------------------------------------------------ T3.2
def test_t3_2_edge1_fallback_chain_and_label_types(store):
    """T3.2 / S2.7, S2.9, S3.1: nine cases, no score_mae key, the reference's numbers."""
    ref = expected("edge1.expected.json")
    rid = store.ingest(fixture_rows("edge1.json"))
    doc = store.build(rid, score_within=[0.5])
    assert report_diffs(doc, ref["overall"], ref["slices"]) == []
    check_cases(doc, ref["cases"])
    o = doc["overall"]
    assert len(doc["cases"]) == 9 and doc["extensions"]["run"]["n_cases"] == 9
    assert "score_mae" not in o and "score_within_0.5" not in o
    assert o["choice_accuracy"] == 2 / 3 and o["noul_accuracy"] == 0.5 and o["mean_confidence"] == 0.635
    assert o["ece"] == 0.385 and close(o["brier"], 0.35025) and close(o["aurc"], 19 / 24)
    assert o["selective_accuracy@50"] == 0.0 and o["selective_accuracy@80"] == 0.5
    ext = doc["extensions"]["overall"]
    assert ext["score_mae"] == {"n": 0, "reason": "no_applicable_case"}
    assert ext["score_within_0.5"] == {"n": 0, "reason": "no_applicable_case"}
    assert ext["mean_confidence"]["n"] == 8 and ext["ece"]["n_paired"] == 4
    sources = dict(connect(store.wh, [rid]).execute(
        "SELECT qid, coalesce(confidence_source, '-') FROM cases").fetchall())
    assert sources == {"c1": "confidence", "c2": "probabilities", "c3": "-", "n1": "noul",
                       "n2": "confidence", "n3": "answer_confidence", "c4": "answer_confidence",
                       "s1": "answer_confidence", "s2": "answer_confidence"}


# ------------------------------------------------------------------------------------ T3.3
def test_t3_3_edge4_empty_group_and_extreme_bins(store):
    """T3.3 / S0.5, S4.2: slices.language.xx is {}; bins 0 and 14."""
    ref = expected("edge4.expected.json")
    doc = store.report(fixture_rows("edge4.json"), score_within=[0.5])
    assert report_diffs(doc, ref["overall"], ref["slices"]) == []
    check_cases(doc, ref["cases"])
    assert doc["slices"]["language"]["xx"] == {}
    assert doc["slices"]["qid"]["a"] == doc["overall"]
    assert doc["overall"]["ece"] == 1.0 and doc["overall"]["aurc"] == 0.75 and doc["overall"]["brier"] == 1.0
    rel = doc["extensions"]["overall"]["reliability"]
    assert [r["n_b"] for r in rel] == [1] + [0] * 13 + [1]
    assert doc["extensions"]["slices"]["language"]["xx"]["choice_accuracy"] == {"n": 0, "reason":
                                                                              "no_applicable_case"}


# ------------------------------------------------------------------------------------ T3.4
def test_t3_4_nan_confidence_and_odd_slice_keys(store):
    """T3.4 / S3.3 (NaN mean published, NaN brier dropped), S3.10, S3.12, S4.1 (str keys)."""
    rows = [record_to_row(0, {"qid": "q", "qtype": "choice", "gold": "a", "pred": "a",
                              "answer_confidence": math.nan, "language": "en"}),
            record_to_row(1, {"qid": "q", "qtype": "choice", "gold": "a", "pred": "b",
                              "answer_confidence": 0.5, "language": 5}),
            record_to_row(2, {"qid": "q", "qtype": "choice", "gold": "a", "pred": "a",
                              "answer_confidence": 0.9, "language": "", "tags": [1, None]})]
    rid = store.ingest(rows)
    doc = store.build(rid)
    o = doc["overall"]
    assert o["choice_accuracy"] == 2 / 3 and math.isnan(o["mean_confidence"])
    assert "brier" not in o
    assert o["ece"] == 0.19999999999999998 and close(o["aurc"], 0.2777777777777778)
    assert o["selective_accuracy@50"] == 0.5 and o["selective_accuracy@80"] == 2 / 3
    assert sorted(doc["slices"]["language"]) == ["", "5", "en"]
    assert sorted(doc["slices"]["tag"]) == ["1", "None"]
    en = doc["slices"]["language"]["en"]
    assert {k: v for k, v in en.items() if k != "mean_confidence"} == {
        "aurc": 0.0, "ece": 0.0, "selective_accuracy@50": 1.0, "selective_accuracy@80": 1.0,
        "choice_accuracy": 1.0}
    assert math.isnan(en["mean_confidence"])
    ext = doc["extensions"]["overall"]
    assert ext["brier"]["reason"] == "nan_dropped" and ext["brier"]["n"] == 0
    assert ext["ece"]["n_unbinned_nan"] == 1 and ext["ece"]["n_paired"] == 3
    assert ext["risk_coverage"][-1]["confidence"] is None                # the NaN level (S9.3)
    text = R.dumps(doc)
    assert '"mean_confidence": NaN' in text                            # JSON NaN token (S4.4)


# ------------------------------------------------------------------------------------ T3.5
def test_t3_5_out_of_range_confidences(store):
    """T3.5 / S3.10 (unbinned but in N), S3.11 (no clamping)."""
    doc = store.report(choice_rows([(1.2, True), (-0.1, False), (0.2, True), (0.7333333333333334, False)]))
    o = doc["overall"]
    assert o["ece"] == 0.38333333333333336
    assert close(o["brier"], 0.30694444444444446)
    assert same_bits(o["mean_confidence"], 0.5083333333333333)
    assert close(o["aurc"], 1 / 3)
    assert o["selective_accuracy@50"] == 0.5 and o["selective_accuracy@80"] == 0.5
    ece = doc["extensions"]["overall"]["ece"]
    assert (ece["n_paired"], ece["n_unbinned_out_of_range"], ece["n_unbinned_nan"]) == (4, 2, 0)
    rel = doc["extensions"]["overall"]["reliability"]
    assert [r["bin"] for r in rel if r["n_b"]] == [2, 11]


# ------------------------------------------------------------------------------------ T3.6
T3_6 = [([1.2, 0.5], [True, True], 0.25),
        ([math.nan, 0.5], [True, True], 0.25),
        ([-0.1, 0.5], [False, True], 0.25),
        ([0.0], [False], 0.0), ([0.0], [True], 1.0),
        ([1.0], [True], 0.0), ([1.0], [False], 1.0),
        ([0.0, 1 / 15], [False, False], 0.03333333333333333)]


@pytest.mark.parametrize("confs,corrects,value", T3_6)
def test_t3_6_ece_edges(store, confs, corrects, value):
    """T3.6 / S3.10: bin 0 closed, 1.0 in bin 14, unbinned values stay in N."""
    doc = store.report(choice_rows(list(zip(confs, corrects))))
    assert doc["overall"]["ece"] == value


def test_t3_6_ece_without_paired_cases_has_no_value(store):
    """T3.6 last row / S0.5: no paired case, no ece key, and the absence is explained (S9.2)."""
    doc = store.report(choice_rows([(None, True), (None, False)]))
    for name in ("ece", "brier", "aurc", "selective_accuracy@50", "selective_accuracy@80"):
        assert name not in doc["overall"]
        assert doc["extensions"]["overall"][name] == {"n": 0, "reason": "no_applicable_case"}
    assert doc["overall"] == {"choice_accuracy": 0.5}


# ------------------------------------------------------------------------------------ T3.7
T3_7 = [([(0.7, i < 4) for i in range(8)], 0.5, 0.5, 0.5, 0.5),
        ([(math.nan, True), (0.5, False)], 0.75, 0.0, 0.5, 0.5),
        ([(0.3, True)], 0.0, 1.0, 1.0, 1.0),
        ([(0.3, False)], 1.0, 0.0, 0.0, 0.0)]


@pytest.mark.parametrize("pairs,aurc,s50,s80,s100", T3_7)
def test_t3_7_coverage_edges(store, pairs, aurc, s50, s80, s100):
    """T3.7 / S3.13, S3.14: whole tie levels, NaN last, sel@100 through an extra cut (S9.3)."""
    doc = store.report(choice_rows(pairs), coverages=[1.0])
    o = doc["overall"]
    assert close(o["aurc"], aurc)
    assert (o["selective_accuracy@50"], o["selective_accuracy@80"]) == (s50, s80)
    assert doc["extensions"]["overall"]["coverage"]["1.0"]["selective_accuracy"] == s100


def test_t3_7_nan_level_cut(store):
    """T3.7 row 3: k = 1 cuts at 0.5 (NaN ranks last), so sel@50 accepts only the 0.5 case."""
    doc = store.report(choice_rows([(math.nan, True), (0.5, False)]))
    cut = doc["extensions"]["overall"]["selective_accuracy@50"]
    assert (cut["k_requested"], cut["accepted"], cut["cut_confidence"]) == (1, 1, 0.5)
    assert doc["extensions"]["overall"]["selective_accuracy@80"]["cut_confidence"] is None


def test_t3_7_empty_and_out_of_range_coverage(store):
    """T3.7: an empty paired set has no coverage value; c = 0 or 1.01 has none either."""
    doc = store.report(choice_rows([(None, True)]), coverages=[0.5])
    assert "aurc" not in doc["overall"] and "coverage" not in doc["extensions"]["overall"]
    for bad in (0.0, 1.01, -0.5, math.nan):
        with pytest.raises(UsageError):
            R.check_coverage(bad)
    rid = store.ingest(choice_rows([(0.9, True), (0.4, False)]))
    con = connect(store.wh, [rid])
    R.compute(con, rid, R.Options())                           # materialises the pipeline tables
    for bad in (0.0, 1.01):                                    # the SQL guards it too
        assert Q.query(con, "metrics/selective_accuracy.sql", {"coverage": bad}).fetchall() == []
    assert len(Q.query(con, "metrics/selective_accuracy.sql", {"coverage": 1.0}).fetchall()) == 2


# ------------------------------------------------------------------------------------ T3.8
T3_8_CONF = [0.9, 0.9, 0.8, 0.8, 0.8, 0.5]
T3_8_OK = [True, False, False, True, True, False]


@pytest.mark.slow
def test_t3_8_all_720_orders_through_the_sql(store):
    """T3.8 / S3.12-S3.14, S9.8: every row order of the six cases gives aurc 0.45, sel 0.6/0.6.

    Each permutation is written as its own qid, so one ingest and one pipeline run evaluate all
    720 orders as 720 `qid` slice groups of the real SQL.
    """
    import itertools

    rows = []
    for p, perm in enumerate(itertools.permutations(range(6))):
        for i in perm:
            rows.append(record_to_row(len(rows), {"qid": "p%03d" % p, "qtype": "choice", "gold": "a",
                                                  "pred": "a" if T3_8_OK[i] else "b",
                                                  "answer_confidence": T3_8_CONF[i]}))
    doc = store.report(rows, include_cases=False)
    groups = doc["slices"]["qid"]
    assert len(groups) == 720
    for key, group in groups.items():
        assert close(group["aurc"], 0.45), key
        assert group["selective_accuracy@50"] == 0.6 and group["selective_accuracy@80"] == 0.6, key
    texts = {json.dumps(g, sort_keys=True) for g in groups.values()}
    assert len(texts) == 1                                                  # bit-identical


@pytest.mark.slow
def test_t3_8_sampled_orders_through_ingest(store):
    """T3.8 through separate runs: a sample of row orders gives byte-identical metrics."""
    import random

    rng = random.Random(8)
    seen = set()
    for _ in range(6):
        order = list(range(6))
        rng.shuffle(order)
        doc = store.report(choice_rows([(T3_8_CONF[i], T3_8_OK[i]) for i in order]), include_cases=False)
        seen.add(R.dumps(doc["overall"]))
        assert doc["overall"]["selective_accuracy@50"] == 0.6
    assert len(seen) == 1


def test_t3_8_risk_coverage_points(store):
    """T3.8 second vector / S9.3: coverage (0.5, 0.75, 1.0), risk (0.5, 1/3, 0.5)."""
    doc = store.report(choice_rows(list(zip([0.9, 0.9, 0.8, 0.5], [True, False, True, False]))))
    curve = doc["extensions"]["overall"]["risk_coverage"]
    assert [p["coverage"] for p in curve] == [0.5, 0.75, 1.0]
    assert [p["risk"] for p in curve][0] == 0.5 and close(curve[1]["risk"], 1 / 3) and curve[2]["risk"] == 0.5
    assert [p["confidence"] for p in curve] == [0.9, 0.8, 0.5]


# ------------------------------------------------------------------------------------ T3.0
@pytest.mark.parametrize("latencies,p50,p95", [(list(range(1, 21)), 10.5, 19.0), ([5], 5.0, 5.0),
                                               ([1, 2], 1.5, 2.0), ([3, 1, 2, 2, 1, 2], 2.0, 3.0),
                                               ([7, 7], 7.0, 7.0), ([2, 1, 1, 2], 1.5, 2.0)])
def test_t3_0_timing_percentiles(store, latencies, p50, p95):
    """T3.0 / S3.15: latency_ms per row -> p50 (median) and p95 (rank (95n+99) div 100), overall only."""
    from laya.evals import _percentiles

    rows = choice_rows([(0.9, True)] * len(latencies), language="en")
    for row, ms in zip(rows, latencies):
        row["latency_ms"] = ms
    doc = store.report(rows)
    o = doc["overall"]
    assert (o["latency_p50_ms"], o["latency_p95_ms"]) == (p50, p95) == _percentiles(latencies)
    assert (o["cost_per_decision_p50_ms"], o["cost_per_decision_p95_ms"]) == (p50, p95)  # chunks of one
    assert not any(k.endswith("_ms") for g in doc["slices"]["language"].values() for k in g)
    assert doc["extensions"]["overall"]["latency_p50_ms"] == {"n": len(latencies)}


@pytest.mark.slow
def test_t3_0_timing_counts_rows_without_cases(store):
    """S3.15: a row with `expected: {}` made a call, so its latency counts; no latency, no key."""
    rows = choice_rows([(0.9, True)])
    rows[0]["latency_ms"] = 1
    empty = dict(choice_rows([(0.5, True)])[0], expected={}, state="empty", latency_ms=2)
    doc = store.report(rows + [empty])
    assert (doc["overall"]["latency_p50_ms"], doc["overall"]["latency_p95_ms"]) == (1.5, 2.0)
    assert len(doc["cases"]) == 1
    doc = store.report(choice_rows([(0.9, True)]))
    assert not any(k.endswith("_ms") for k in doc["overall"])


# ------------------------------------------------------------------------------------ S3.7
def test_s3_7_score_within_keys_use_percent_g(store):
    """S3.7: the key is score_within_ + %g of the tolerance; the bound is inclusive."""
    rows = [record_to_row(0, {"qid": "u", "qtype": "score", "gold": 2, "pred": 1.6, "answer_confidence": 0.5}),
            record_to_row(1, {"qid": "u", "qtype": "score", "gold": 1, "pred": 1.25, "answer_confidence": 0.5})]
    doc = store.report(rows, score_within=[0.25, 1, 1e-5, 1234567])
    o = doc["overall"]
    assert {k for k in o if k.startswith("score_within_")} == {
        "score_within_0.25", "score_within_1", "score_within_1e-05", "score_within_1.23457e+06"}
    assert o["score_within_0.25"] == 0.5 and o["score_within_1"] == 1.0            # |1.25 - 1| <= 0.25
    assert o["score_within_1e-05"] == 0.0 and o["score_within_1.23457e+06"] == 1.0
    assert doc["slices"]["qid"]["u"]["score_within_0.25"] == 0.5
    assert doc["extensions"]["overall"]["score_within_0.25"] == {"n": 2, "hits": 1}
    assert doc["config"]["score_within"] == [0.25, 1.0, 1e-05, 1234567.0]
    for bad in (math.nan, math.inf, -1.0, True):
        with pytest.raises(UsageError):
            R.check_tolerance(bad)


@pytest.mark.slow   # CLI runs
def test_s3_7_cli_rejects_bad_tolerance_and_warns_on_missing_value(tmp_path):
    """S3.7: tolerance must be finite and >= 0 (exit 2); a valueless one warns on stderr."""
    store = Store(tmp_path)
    rid = store.ingest(choice_rows([(0.9, True), (0.4, False), (None, True)]))
    wh = str(store.wh.root)
    bad = cli("report", rid, "-w", wh, "--score-within", "-1")
    assert bad.returncode == 2 and bad.stderr.startswith("laya-cases: ") and len(bad.stderr.splitlines()) == 1
    ok = cli("report", rid, "-w", wh, "--score-within", "0.5", check=True)
    assert ("laya-cases: score_within_0.5 has no value: 0 of 3 answered case(s) are score answers, and the "
            "metric needs one whose label is a number. A threshold naming it reports it missing.") in ok.stderr


# ------------------------------------------------------------------------------------ S9.3 / S9.4
@pytest.mark.parametrize("fixture", ["ties.json", "edge1.json", "edge4.json"])
def test_s9_3_curve_reproduces_aurc_and_s9_4_bins_reproduce_ece(store, fixture):
    """S9.3: fsum(risk * rows) / N over the curve is aurc; S9.4: contributions in bin order sum to ece."""
    doc = store.report(fixture_rows(fixture))
    ext = doc["extensions"]["overall"]
    curve = ext["risk_coverage"]
    n = curve[-1]["accepted"]
    assert sum(p["rows"] for p in curve) == n == ext["aurc"]["n_paired"]
    assert math.fsum(p["risk"] * p["rows"] for p in curve) / n == doc["overall"]["aurc"]
    rel = ext["reliability"]
    assert [r["bin"] for r in rel] == list(range(15))
    assert rel[0]["closed_lower"] and not any(r["closed_lower"] for r in rel[1:])
    assert [r["lower"] for r in rel] + [rel[-1]["upper"]] == [i / 15 for i in range(16)]
    assert reliability_total(rel) == doc["overall"]["ece"]
    for r in rel:
        if r["n_b"]:
            assert r["weight"] == r["n_b"] / n and r["gap"] == r["mean_confidence"] - r["accuracy"]
            assert r["contribution"] == r["weight"] * abs(r["gap"])
        else:
            assert r["contribution"] is r["mean_confidence"] is r["weight"] is None


def test_s9_3_and_s9_4_hold_in_slices_with_nan_and_out_of_range(store):
    """S9.3/S9.4 also when NaN and out-of-range confidences are in N but in no bin."""
    doc = store.report(choice_rows([(math.nan, True), (1.2, False), (0.7, True), (0.7, False), (0.2, True),
                                    (-0.1, True), (0.95, True)]))
    ext = doc["extensions"]["overall"]
    assert reliability_total(ext["reliability"]) == doc["overall"]["ece"]
    curve = ext["risk_coverage"]
    assert [p["confidence"] for p in curve] == [1.2, 0.95, 0.7, 0.2, -0.1, None]
    assert math.fsum(p["risk"] * p["rows"] for p in curve) / 7 == doc["overall"]["aurc"]
    for key, group in doc["extensions"]["slices"]["qid"].items():
        assert reliability_total(group["reliability"]) == doc["slices"]["qid"][key]["ece"]


# ------------------------------------------------------------------------------------ S1.4 / S1.6
def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def _reference_message(path):
    from laya.evals import Dataset, EvalError

    try:
        Dataset.from_jsonl(path)
    except EvalError as exc:
        return str(exc)
    return None


GOOD = '{"state": 1, "questions": {"a": {}}, "expected": {"a": "x"}}'
FAILING = [  # (S1.4 check number, file content)
    (2, "# head\n\n" + GOOD + "\n{bad json\n"),
    (3, "[1, 2]\n"), (3, '"text"\n'), (3, "5\n"), (3, "null\n"),
    (4, '{"questions": {}, "expected": {}}\n'), (4, '{"state": null, "expected": {}}\n'),
    (4, '{"state": null, "questions": {}}\n'),
    (5, '{"state": 1, "questions": [], "expected": {}}\n'),
    (6, '{"state": 1, "questions": {}, "expected": ["a"]}\n'),
    (7, '{"state": 1, "questions": {"a": {}}, "expected": {"c": 1, "a": 1, "b": 2}}\n'),
    (8, GOOD + "\n" + '{"state": 1, "questions": {}, "expected": {}, "tags": "vip"}\n'),
    (8, '{"state": 1, "questions": {}, "expected": {}, "tags": {"a": 1}}\n'),
    (9, "# only a comment\n\n   \n  # indented\n"),
    (2, b"\xef\xbb\xbf" + GOOD.encode() + b"\n"),                               # BOM: line 1 fails
    (2, GOOD + "\r" + GOOD + "\r\n" + GOOD + "\n{oops\n"),                       # lone CR counts: line 4
    (7, '{"state": 1, "questions": {"a": {}}, "expected": {"a": 1}, "expected": {"b": 1}}\n'),  # last wins
    (1, b'{"state": "\xff"}\n'),                                               # not UTF-8
    (1, "[" * 100000 + "\n"),                                                  # nested too deep
]


@pytest.mark.slow   # ~25 CLI runs
@pytest.mark.parametrize("check,content", FAILING)
def test_s1_4_validate_failures_match_the_reference(tmp_path, check, content):
    """S1.4: first failure wins; one line `laya-cases: <reference message>` on stderr, exit 2."""
    path = _write(tmp_path, "data.jsonl", content)
    ref = _reference_message(path)
    assert ref is not None
    proc = cli("validate", path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "laya-cases: %s\n" % ref
    markers = {1: "cannot be read", 2: "is not valid JSON", 3: "must be an object", 4: "is missing",
               5: "'questions' must be an object", 6: "'expected' must be an object keyed by question id",
               7: "'expected' names unknown question(s)", 8: "'tags' must be a list", 9: "contains no examples"}
    assert markers[check] in ref


@pytest.mark.slow   # CLI runs
def test_s1_4_line_numbers_and_sorted_unknown_qids(tmp_path):
    """S1.1: physical line numbers with skipped lines counted, lone CR a break; S1.4 #7 sorted."""
    p = _write(tmp_path, "a.jsonl", GOOD + "\r" + GOOD + "\r\n" + GOOD + "\n{oops\n")
    assert cli("validate", p).stderr.startswith("laya-cases: %s:4 is not valid JSON: " % p)
    p = _write(tmp_path, "b.jsonl", '{"state": 1, "questions": {"a": {}}, "expected": {"c": 1, "a": 1, "b": 2}}\n')
    assert cli("validate", p).stderr == "laya-cases: %s:1 'expected' names unknown question(s): b, c\n" % p
    p = _write(tmp_path, "c.jsonl", b"\xef\xbb\xbf" + GOOD.encode() + b"\n")
    assert cli("validate", p).stderr.startswith("laya-cases: %s:1 is not valid JSON: " % p)


@pytest.mark.slow   # CLI runs
def test_s1_4_missing_and_directory_paths(tmp_path):
    """S1.4 #1: a missing file and a directory are `cannot be read` (exit 2)."""
    for path in (str(tmp_path / "nope.jsonl"), str(tmp_path)):
        proc = cli("validate", path)
        assert proc.returncode == 2 and proc.stderr == "laya-cases: %s\n" % _reference_message(path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_s1_4_unreadable_file(tmp_path):
    path = _write(tmp_path, "locked.jsonl", GOOD + "\n")
    os.chmod(path, 0)
    proc = cli("validate", path)
    assert proc.returncode == 2 and "cannot be read" in proc.stderr


@pytest.mark.slow   # CLI runs
def test_s1_6_validate_success_lines(tmp_path):
    """S1.6 / S1.1 / S1.5: summary line; comments (indented too), blanks, NaN tokens, odd rows."""
    content = ("  # indented comment\n\n"
               '   {"state": NaN, "questions": {"b": {}, "a": {}, "b": {"type": "x"}}, "expected": {"a": Infinity}}  \n'
               '{"state":1,"questions":{"a":{"type":"bogus"}},"expected":{"a":[1,2]},"tags":[1,null],"language":5}\n'
               '{"state": null, "questions": {"Z": {}}, "expected": {}, "tags": 0, "id": 7, "comment": "x"}\r\n'
               '{"state": -Infinity, "questions": {}, "expected": {}, "tags": ""}\r')
    path = _write(tmp_path, "ok.jsonl", content)
    assert _reference_message(path) is None
    proc = cli("validate", path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "4 examples, 3 question id(s): Z, a, b\n"                 # code-point order
    rows = D.load(path)
    assert list(rows[0].questions) == ["b", "a"] and rows[0].questions["b"] == {"type": "x"}
    assert math.isinf(rows[0].expected["a"]) and rows[1].tags == ("1", "None")
    assert [r.line_no for r in rows] == [3, 4, 5, 6]
    one = _write(tmp_path, "one.jsonl", GOOD + "\n")
    assert cli("validate", one).stdout == "1 examples, 1 question id(s): a\n"        # no singular form
    usage = cli("validate")
    assert usage.returncode == 2


# ------------------------------------------------------------------------------------ T5.1 / T5.2
T5_1 = (
    '# worked example for questions_sha256 (S5)\n'
    '{"state": "Quiero mi dinero", "questions": {"intent": {"type": "choice", "instructions": "¿Qué quiere el '
    'cliente?", "criteria": {"refund": "wants money back", "cancel": null}}, "spam": {"type": "noul", '
    '"instructions": {"es": "¿Es spam?", "n": 1}, "labels": {"false": "ham", "true": "spam"}}}, "expected": '
    '{"intent": "refund", "spam": false}, "language": "es"}\n'
    '{"state": "Quiero mi dinero ya", "questions": {"intent": {"type": "choice", "instructions": "¿Qué quiere '
    'el cliente?", "criteria": {"refund": "wants money back", "cancel": null}, "note": "ignored by the hash"}}, '
    '"expected": {"intent": "refund"}, "language": "es"}\n'
    '{"state": {"subject": "urgente"}, "questions": {"urgency": {"type": "score", "criteria": ["low", "mid", '
    '1e2], "option_order": [2, 0, 1]}}, "expected": {"urgency": 2}}\n')
T5_1_QUESTIONS = "f5a60a295ef1c079b803cec3801e838bba91d463837fc0b0920ca28cb0324b10"
T5_1_DATASET = "9450e20a91f752b28637ae677d1e89d5bf8f50e7a30303bee702cad9309f3d70"


def _questions_sha(path):
    return I.questions_sha256(row.questions for row in D.load(path))


def test_t5_1_questions_and_dataset_sha256(tmp_path):
    """T5.1 / S5.1, S5.2: the 839-byte file from the spec and its two digests."""
    data = T5_1.encode("utf-8")
    assert len(data) == 839
    path = _write(tmp_path, "qfp.jsonl", data)
    assert I.file_sha256(path) == T5_1_DATASET == hashlib.sha256(data).hexdigest()
    assert _questions_sha(path) == T5_1_QUESTIONS
    assert cli("validate", path).stdout == "3 examples, 3 question id(s): intent, spam, urgency\n"
    lines = T5_1.split("\n")
    without_row_2 = _write(tmp_path, "no2.jsonl", "\n".join(lines[:2] + lines[3:]))
    assert _questions_sha(without_row_2) == T5_1_QUESTIONS
    swapped = T5_1.replace('"criteria": {"refund": "wants money back", "cancel": null}, "note"',
                           '"criteria": {"cancel": null, "refund": "wants money back"}, "note"')
    assert swapped != T5_1
    assert _questions_sha(_write(tmp_path, "swap.jsonl", swapped)) == \
        "3a35ee13cd4d3c1785a93b890535cae2c3b30dee373cfe9608f4f68b2df452cd"


def test_t5_1_identity_recorded_by_ingest(tmp_path):
    """S5.5: ingesting answers over the T5.1 dataset records both digests in `config`."""
    path = _write(tmp_path, "qfp.jsonl", T5_1)
    answers = {"intent": {"type": "choice", "choice": "refund", "answer_confidence": 0.8},
               "spam": {"type": "noul", "noul": 0.2, "answer_confidence": 0.8},
               "urgency": {"type": "score", "score": 1.5, "answer_confidence": 0.6}}
    rows = []
    for row in D.load(path):
        rows.append(dict(row.raw, answers={q: answers[q] for q in row.expected}))
    store = Store(tmp_path)
    doc = store.build(store.ingest(rows, dataset_path=path))
    assert doc["config"]["questions_sha256"] == T5_1_QUESTIONS
    assert doc["config"]["dataset_sha256"] == T5_1_DATASET
    assert doc["config"]["schema"] == "laya-evals-report/1"
    assert doc["config"]["coverage_metric_definition"] == 2


def test_t5_2_ds_jsonl_digests():
    """T5.2: fixtures/ds.jsonl."""
    path = str(SPEC_FIXTURES / "ds.jsonl")
    assert _questions_sha(path) == "78e6762772d728e663ee39333bd307d7d7089ee8e4df559f31b3fa7b3dab99fe"
    assert I.file_sha256(path) == "7b9e51c6f75e6ea8c71d16558298234f856b0f348f29796df7756d939df0f9a8"
    from laya.evals import Dataset, questions_fingerprint

    assert questions_fingerprint(Dataset.from_jsonl(path)) == _questions_sha(path)
