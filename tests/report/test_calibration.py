"""Recalibration (laya_cases/report/calibration.py, sql/calibration/): every number against an independent
implementation on random cases with ties, NaN and empty groups: the temperature against
scipy.optimize, Platt against scipy, the SQL's ECE, equal-mass and class-wise ECE, Brier, NLL and
selective accuracy against numpy / plain Python over the same probabilities."""
from __future__ import annotations

import json
import math
import random

import duckdb
import numpy as np
import pytest

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as S
from laya_cases.report import calibration as C

optimize = pytest.importorskip("scipy.optimize")

LABELS = ["a", "b", "c", "d", "e", "f"]


def _softmax(z, t=1.0):
    z = np.asarray(z, dtype=float) / t
    e = np.exp(z - z.max())
    return e / e.sum()


def _cases(rng: random.Random, run_id: str, n: int, source: str = "logits"):
    """Random choice and noul cases of one run. Confidences tie (logits on a 0.25 grid), some
    probabilities are stored as 0 (rounded away), some labels are not among the options."""
    rows = []
    for i in range(n):
        noul = rng.random() < 0.3
        k = 2 if noul else rng.choice([3, 4, 6])
        options = ["false", "true"] if noul else rng.sample(LABELS, k)
        z = [rng.randrange(-8, 9) * 0.25 * (3 if rng.random() < 0.3 else 1) for _ in range(k)]
        t = 0.8
        p = _softmax(z, t)
        pred = int(np.argmax(p))
        gold = rng.randrange(k) if rng.random() < 0.6 else pred
        if noul:
            expected = "true" if gold == 1 else "false"
            correct = (p[1] >= 0.5) == (gold == 1)
        else:
            expected = json.dumps(options[gold] if rng.random() > 0.05 else "zzz")
            correct = options[pred] == json.loads(expected)
        row = {"run_id": run_id, "case_id": "%s-%d" % (run_id, i), "answer_type": "noul" if noul else "choice",
               "temperature_bucket": ("noul:2" if noul else "choice:%s" % ("3-5" if k <= 5 else "6-10"))
               if source == "logits" else None,
               "options": options, "expected_json": expected, "correct": bool(correct),
               "confidence": float(p.max()), "logits": None, "temperature": None, "probabilities": None,
               "noul_p": None}
        if source == "logits":
            row.update(logits=z, temperature=t)
        elif noul:
            row.update(noul_p=round(float(p[1]), 4))
        else:
            row.update(probabilities=[round(float(x), 4) for x in p])
        rows.append(row)
    return rows


def _con(rows):
    con = duckdb.connect()
    S.prepare_connection(con)
    con.execute("CREATE TABLE cases (run_id VARCHAR, case_id VARCHAR, answer_type VARCHAR, temperature_bucket VARCHAR, "
                "options VARCHAR[], expected_json VARCHAR, correct BOOLEAN, confidence DOUBLE, logits DOUBLE[], "
                "temperature DOUBLE, probabilities DOUBLE[], noul_p DOUBLE)")
    cols = ["run_id", "case_id", "answer_type", "temperature_bucket", "options", "expected_json", "correct",
            "confidence", "logits", "temperature", "probabilities", "noul_p"]
    con.executemany("INSERT INTO cases VALUES (%s)" % ", ".join("?" * len(cols)), [[r[c] for c in cols] for r in rows])
    return con


def _logp(r):
    """Independent reading of a case's log-scores (the rules of sql/calibration/scores.sql)."""
    if r["logits"] is not None:
        return [x / r["temperature"] for x in r["logits"]]
    if r["probabilities"] is not None:
        return [math.log(p if p > 0 else 5e-5) for p in r["probabilities"]]
    p = r["noul_p"]
    return [math.log(1 - p if p < 1 else 5e-5), math.log(p if p > 0 else 5e-5)]


def _gold(r):
    if r["answer_type"] == "noul":
        return 1 if r["expected_json"] == "true" else 0
    label = json.loads(r["expected_json"])
    return r["options"].index(label) if label in r["options"] else None


def _scipy_temperature(rows):
    def loss(t):
        return float(np.mean([-np.log(_softmax(_logp(r), t)[_gold(r)]) for r in rows]))
    return optimize.minimize_scalar(loss, bounds=(C.T_MIN, C.T_MAX), method="bounded",
                                    options={"xatol": 1e-9}).x, loss


# ---------------------------------------------------------------------------- numpy references
def ece_equal_width(conf, correct, n_total):
    edges = [i / 15 for i in range(16)]
    total = 0.0
    bins = [sum(c > edges[i] for i in range(1, 15)) if 0 <= c <= 1 else None for c in conf]
    for b in range(15):
        idx = [i for i, x in enumerate(bins) if x == b]
        if idx:
            total += len(idx) / n_total * abs(np.mean([conf[i] for i in idx]) - np.mean([correct[i] for i in idx]))
    return total


def ece_equal_mass(conf, correct):
    conf, correct = np.asarray(conf, dtype=float), np.asarray(correct, dtype=float)
    ok = (conf >= 0) & (conf <= 1)
    c, y = conf[ok], correct[ok]
    below = np.searchsorted(np.sort(c), c, side="left")
    bins = (15 * below) // len(c)
    return sum((bins == b).sum() / len(conf) * abs(c[bins == b].mean() - y[bins == b].mean())
               for b in np.unique(bins))


def ece_classwise(cases):
    """cases: (options, probs, gold index) of choice cases."""
    per = {}
    for options, probs, gold in cases:
        for i, label in enumerate(options):
            per.setdefault(label, ([], []))
            per[label][0].append(probs[i])
            per[label][1].append(1.0 if gold == i else 0.0)
    return float(np.mean([ece_equal_width(p, y, len(p)) for p, y in per.values()])), len(per)


def selective(conf, correct, c):
    n = len(conf)
    order = sorted(range(n), key=lambda i: (math.isnan(conf[i]), -conf[i] if not math.isnan(conf[i]) else 0))
    k = max(1, math.ceil(c * n))
    cut = conf[order[k - 1]]
    acc = list(range(n)) if math.isnan(cut) else [i for i in range(n) if conf[i] >= cut]
    return sum(correct[i] for i in acc) / len(acc)


# ---------------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", range(4))
def test_temperature_matches_scipy(seed):
    rng = random.Random(seed)
    rows = [r for r in _cases(rng, "dev", 60, "logits" if seed % 2 else "probs") if _gold(r) is not None]
    logps, golds = [_logp(r) for r in rows], [_gold(r) for r in rows]
    t, at_bound = C.fit_temperature(logps, golds)
    ref, loss = _scipy_temperature(rows)
    assert not at_bound
    assert abs(t - ref) < 1e-5 * ref
    assert loss(t) <= loss(ref) + 1e-12


def test_temperature_at_a_bound():
    """Every case right at a margin: sharper is always better, the fit stops at T_MIN and says so."""
    t, at_bound = C.fit_temperature([[1.0, 0.0], [0.0, 2.0]], [0, 1])
    assert at_bound and t == pytest.approx(C.T_MIN)


def test_platt_matches_scipy():
    rng = np.random.default_rng(3)
    s = np.round(rng.normal(size=200), 1)                       # ties
    y = (rng.random(200) < 1 / (1 + np.exp(-(0.6 * s - 0.3)))).astype(int)
    a, b = C.fit_platt(s, y)
    ref = optimize.minimize(lambda w: np.mean(np.logaddexp(0, w[0] * s + w[1]) - y * (w[0] * s + w[1])),
                            [1.0, 0.0], method="BFGS", options={"gtol": 1e-12}).x
    assert abs(a - ref[0]) < 1e-5 and abs(b - ref[1]) < 1e-5
    assert not C.separable(s, y)
    assert C.separable([0.1, 0.2, 0.9], [0, 0, 1]) and C.separable([0.5, 0.1], [0, 1]) and C.separable([1.0], [1])
    assert not C.separable([0.1, 0.5, 0.5], [0, 0, 1])          # a tie across the labels: no clean cut


@pytest.mark.slow
@pytest.mark.parametrize("seed,source", [(0, "logits"), (1, "probs"), (2, "logits"), (5, "probs")])
def test_scored_numbers_match_numpy(seed, source):
    rng = random.Random(seed)
    rows = _cases(rng, "dev", 80, source) + _cases(rng, "test", 70, source)
    con = _con(rows)
    platt = seed == 2
    dev_counts, fitted = C.fit(con, "dev", platt)
    doc = C.score(con, "test", fitted)
    temps = {r["group"]: r["temperature"] for r in fitted if r["method"] == "temperature"}
    ab = next(((r["a"], r["b"]) for r in fitted if r["method"] == "platt"), None)
    usable = [r for r in rows if r["run_id"] == "test" and _gold(r) is not None]
    assert doc["cases"] == {"paired": 70, "usable": len(usable)}
    assert dev_counts["usable"] == len([r for r in rows if r["run_id"] == "dev" and _gold(r) is not None])
    for phase in ("before", "after"):
        conf, correct, nlls, choice = [], [], [], []
        for r in usable:
            bucket = r["temperature_bucket"] or "all"
            logp = _logp(r)
            if phase == "after" and ab is not None and r["answer_type"] == "noul":
                q = 1 / (1 + math.exp(-(ab[0] * (logp[1] - logp[0]) + ab[1])))
                p, ok = np.array([1 - q, q]), (q >= 0.5) == (_gold(r) == 1)
            else:
                p = _softmax(logp, temps.get(bucket, temps["all"]) if phase == "after" else 1.0)
                ok = r["correct"]
            conf.append(float(p.max()))
            correct.append(1.0 if ok else 0.0)
            nlls.append(-math.log(p[_gold(r)]))
            if r["answer_type"] == "choice":
                choice.append((r["options"], p, _gold(r)))
        got = doc[phase]
        assert got["n"] == len(conf) and got["hits"] == sum(correct)
        assert got["ece"] == pytest.approx(ece_equal_width(conf, correct, len(conf)), abs=1e-12)
        assert got["ece_equal_mass"] == pytest.approx(ece_equal_mass(conf, correct), abs=1e-12)
        cw, classes = ece_classwise(choice)
        assert got["ece_classwise"] == pytest.approx(cw, abs=1e-12)
        assert got["brier"] == pytest.approx(np.mean((np.array(conf) - correct) ** 2), abs=1e-12)
        assert got["nll"] == pytest.approx(np.mean(nlls), abs=1e-9)
        assert got["mean_confidence"] == pytest.approx(np.mean(conf), abs=1e-12)
        for c, key in ((0.5, "selective_accuracy_50"), (0.8, "selective_accuracy_80")):
            assert got[key] == pytest.approx(selective(conf, correct, c), abs=1e-12)
        bins = doc["reliability"][phase]
        assert [b["n_b"] for b in bins] == [sum(1 for x in conf if 0 <= x <= 1 and
                                                sum(x > i / 15 for i in range(1, 15)) == b) for b in range(15)]
        assert [b["too_small"] for b in bins] == [b["n_b"] < 10 for b in bins]
        assert math.fsum(b["contribution"] or 0.0 for b in bins) == pytest.approx(got["ece"], abs=1e-12)
    if not platt:                                            # a temperature never moves a prediction
        assert doc["before"]["hits"] == doc["after"]["hits"]
        assert doc["after"]["nll"] <= doc["before"]["nll"] + 0.5   # held out: usually better, never wild


def test_equal_mass_ties_nan_and_out_of_range():
    """NaN and out-of-range confidences stay in N but in no bin; tied confidences share one bin."""
    con = duckdb.connect()
    S.prepare_connection(con)
    rng = random.Random(7)
    conf = [rng.choice([0.2, 0.5, 0.5, 0.9, 1.0]) for _ in range(40)] + [float("nan"), 1.5, -0.1]
    correct = [rng.random() < 0.6 for _ in conf]
    con.execute("CREATE TABLE calib_applied AS SELECT 'after' AS phase, unnest(?) AS conf, unnest(?) AS correct",
                [conf, correct])
    got = S.rows(S.query(con, "calibration/ece_equal_mass.sql"))[0]
    c, y = np.array(conf), np.array(correct, dtype=float)
    ok = (c >= 0) & (c <= 1)
    below = np.searchsorted(np.sort(c[ok]), c[ok], side="left")
    bins = (15 * below) // ok.sum()
    ref = sum((bins == b).sum() / len(c) * abs(c[ok][bins == b].mean() - y[ok][bins == b].mean())
              for b in np.unique(bins))
    assert (got["n"], got["n_binned"]) == (43, 40)
    assert got["ece_equal_mass"] == pytest.approx(ref, abs=1e-12)


@pytest.mark.slow
def test_classwise_empty_phase_has_no_row():
    """Only noul cases: no class-wise ECE (no row), and the document says None."""
    rows = [r for r in _cases(random.Random(1), "dev", 60) if r["answer_type"] == "noul"]
    rows += [r for r in _cases(random.Random(2), "test", 60) if r["answer_type"] == "noul"]
    con = _con(rows)
    _, fitted = C.fit(con, "dev")
    doc = C.score(con, "test", fitted)
    assert doc["before"]["ece_classwise"] is None and doc["after"]["ece_classwise"] is None


def test_refuses_the_same_run_and_shared_cases():
    rows = _cases(random.Random(4), "dev", 20)
    other = [dict(r, run_id="test") for r in rows[:5]] + _cases(random.Random(5), "test", 20)
    con = _con(rows + other)
    with pytest.raises(UsageError, match="same run"):
        C.check_held_out(con, "dev", "dev")
    with pytest.raises(UsageError, match="share 5 case id"):
        C.check_held_out(con, "dev", "test")


def test_a_sharp_wrong_case_costs_a_finite_loss():
    """Logits 800 apart at the smallest temperature: P(gold) underflows to 0, the NLL stays finite and exact
    (logsumexp - z_gold), so the JSON document has no Infinity."""
    con = duckdb.connect()
    S.prepare_connection(con)
    con.execute("CREATE TABLE calib_scores AS SELECT 'x' AS case_id, 'all' AS bucket, 'choice' AS answer_type, "
                "['a', 'b'] AS options, 'logits' AS source, [8.0, 0.0] AS logp, CAST(1 AS BIGINT) AS gold, "
                "false AS correct, true AS usable")
    con.execute("CREATE TABLE calib_params AS SELECT 'all' AS bucket, 'choice' AS answer_type, 0.01 AS temperature, "
                "CAST(NULL AS DOUBLE) AS platt_a, CAST(NULL AS DOUBLE) AS platt_b")
    got = dict(con.execute("SELECT phase, nll FROM (%s)" % S.text("calibration/apply.sql")).fetchall())
    assert got["after"] == pytest.approx(800.0) and got["before"] == pytest.approx(8.0 + math.log1p(math.exp(-8.0)))


@pytest.mark.slow
def test_a_bucket_the_fit_run_lacks_gets_the_pooled_temperature():
    rows = [r for r in _cases(random.Random(8), "dev", 40) if r["temperature_bucket"] != "choice:6-10"]
    rows += _cases(random.Random(9), "test", 40)
    con = _con(rows)
    _, fitted = C.fit(con, "dev")
    temps = {r["group"]: r["temperature"] for r in fitted}
    assert "choice:6-10" not in temps
    applied = {r["bucket"]: r for r in C.score(con, "test", fitted)["applied"]}
    assert applied["choice:6-10"]["fitted_on"] == "all" and applied["choice:6-10"]["temperature"] == temps["all"]
    assert applied["noul:2"]["fitted_on"] == "noul:2" and applied["noul:2"]["temperature"] == temps["noul:2"]


def test_refuses_a_run_with_nothing_to_rescale():
    rows = [dict(r, logits=None, temperature=None, probabilities=None, noul_p=None)
            for r in _cases(random.Random(6), "dev", 10) if r["answer_type"] == "choice"]
    with pytest.raises(UsageError, match="no choice or noul case with stored logits"):
        C.fit(_con(rows), "dev")
