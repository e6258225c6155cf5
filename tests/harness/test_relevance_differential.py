"""sql/relevance against sklearn, scipy and pure Python on random score sets with ties and missing scores
(thousands of items per run): ROC-AUC, every sweep threshold's F1/MCC/precision/recall/balanced accuracy,
the S8.4 metrics with unparsed items, Wilson, the percentile bootstrap and exact McNemar."""
from __future__ import annotations

import math
import random

import duckdb
import pytest

from laya_cases.query import sql as S
from laya_cases.harness.relevance import metrics
from laya_cases.query.resample import quantile_levels

pytestmark = pytest.mark.slow   # thousands of items per run against sklearn, scipy and pure Python

sklearn_metrics = pytest.importorskip("sklearn.metrics")
GRID = [0.0, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
TOL = 1e-12


def items_table(con, rows):
    import pyarrow as pa

    names = ("run_id", "model_id", "language", "mode", "item_id", "row_index", "position", "gold", "yes_score",
             "no_score", "native_score", "verdict", "truncated")
    types = (pa.string(),) * 5 + (pa.int64(),) * 2 + (pa.bool_(),) + (pa.float64(),) * 3 + (pa.bool_(),) * 2
    table = pa.table({n: pa.array([r[i] for r in rows], type=t) for i, (n, t) in enumerate(zip(names, types))})
    con.register("items_arrow", table)
    con.execute("CREATE OR REPLACE TEMP TABLE rel_items AS SELECT * FROM items_arrow")
    con.unregister("items_arrow")


def synthetic(seed: int, n: int):
    """Three scoring models and one generative model over two languages; scores on a 0.05 grid (ties), 5% missing."""
    rng = random.Random(seed)
    golds = {lang: [rng.random() < 0.4 for _ in range(n)] for lang in ("en", "de")}
    rows, data = [], {}
    for model in ("m1", "m2", "m3", "gen"):
        for lang, gold in golds.items():
            run = "%s-%s" % (model, lang)
            for i, g in enumerate(gold):
                if model == "gen":
                    verdict = None if rng.random() < 0.1 else (rng.random() < (0.7 if g else 0.3))
                    score = None
                else:
                    raw = min(1.0, max(0.0, rng.gauss(0.6 if g else 0.4, 0.25)))
                    score = None if rng.random() < 0.05 else round(raw * 20) / 20
                    verdict = None if score is None else score > 1 - score
                rows.append((run, model, lang, "generative" if model == "gen" else "scoring", "i%d" % i, i, i, g,
                             score, None if score is None else 1 - score, score, verdict, False))
                data.setdefault(run, []).append((g, score, verdict))
    return rows, data


@pytest.fixture(scope="module")
def built():
    con = duckdb.connect()
    S.prepare_connection(con)
    con.execute(S.text("relevance/macros.sql"))
    rows, data = synthetic(7, 3000)
    items_table(con, rows)
    metrics.build(con, replicates=50)
    return con, data


def _sk(gold, pred):
    m = sklearn_metrics
    return {"precision": m.precision_score(gold, pred, zero_division=0.0),
            "recall": m.recall_score(gold, pred, zero_division=0.0),
            "f1": m.f1_score(gold, pred, zero_division=0.0),
            "matthews_corrcoef": m.matthews_corrcoef(gold, pred),
            "balanced_accuracy": m.balanced_accuracy_score(gold, pred),
            "accuracy": m.accuracy_score(gold, pred)}


def test_roc_auc_equals_sklearn(built):
    con, data = built
    got = dict(con.execute("SELECT run_id, roc_auc FROM rel_auc").fetchall())
    assert len(got) == 6
    for run, values in data.items():
        if run.startswith("gen"):
            continue
        gold = [g for g, _, _ in values]
        score = [0.0 if s is None else s for _, s, _ in values]
        assert abs(got[run] - sklearn_metrics.roc_auc_score(gold, score)) < TOL, run


def test_every_sweep_threshold_equals_sklearn(built):
    con, data = built
    sweep = {(r["run_id"], r["threshold"]): r for r in S.rows(con.execute("SELECT * FROM rel_sweep"))}
    assert len(sweep) == 6 * 19
    for run, values in data.items():
        if run.startswith("gen"):
            continue
        gold = [g for g, _, _ in values]
        for t in GRID:
            pred = [(0.0 if s is None else s) >= t for _, s, _ in values]
            want = _sk(gold, pred)
            for key, value in want.items():
                assert abs(sweep[(run, t)][key] - value) < TOL, (run, t, key)


def test_original_verdict_metrics_with_unparsed_items(built):
    con, data = built
    got = {r["run_id"]: r for r in S.rows(con.execute("SELECT * FROM rel_metrics"))}
    for run, values in data.items():
        parsed = [(g, v) for g, _, v in values if v is not None]
        want = _sk([g for g, _ in parsed], [v for _, v in parsed])
        row = got[run]
        for key in ("precision", "recall", "f1", "matthews_corrcoef", "balanced_accuracy"):
            assert abs(row[key] - want[key]) < TOL, (run, key)
        hits = sum(1 for g, v in parsed if g == v)
        assert row["accuracy"] == hits / len(values)
        assert row["unparsed_rate"] == (len(values) - len(parsed)) / len(values)
        assert row["accuracy_hits"] == hits and row["precision_n"] == sum(1 for _, v in parsed if v)


def wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def test_wilson_macros_equal_the_formula():
    con = duckdb.connect()
    con.execute(S.text("relevance/macros.sql"))
    for k, n in [(0, 1), (1, 1), (3, 7), (150, 288), (2, 3), (999, 1000)]:
        low, high = con.execute("SELECT lc_rel_wilson_low(?, ?), lc_rel_wilson_high(?, ?)", [k, n, k, n]).fetchone()
        want = wilson(k, n)
        assert abs(low - want[0]) < TOL and abs(high - want[1]) < TOL
    assert con.execute("SELECT lc_rel_wilson_low(0, 0)").fetchone()[0] is None


def _f1(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def _mcc(tp, fn, tn, fp):
    d = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return (tp * tn - fp * fn) / math.sqrt(d) if d else 0.0


def _quantile(values, p):
    s = sorted(values)
    pos = (len(s) - 1) * p
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def test_bootstrap_intervals_equal_cpython_random_resamples():
    """2000 resamples of 150 items with random.Random(0), quantiles at (B-1)p: the S8.9 rule in pure Python."""
    con = duckdb.connect()
    S.prepare_connection(con)
    con.execute(S.text("relevance/macros.sql"))
    rows, data = synthetic(11, 150)
    items_table(con, [r for r in rows if r[0] in ("m1-en", "gen-en")])
    metrics.build(con)
    got = {(r["run_id"], r["metric"]): r for r in S.rows(con.execute("SELECT * FROM rel_intervals"))}
    lower, upper = quantile_levels(0.95)
    for run in ("m1-en", "gen-en"):
        values = data[run]
        rng = random.Random(0)
        f1s, mccs = [], []
        for _ in range(2000):
            tp = fn = tn = fp = 0
            for _ in range(len(values)):
                g, _, v = values[rng.randrange(len(values))]
                if v is None:
                    continue
                tp, fn, tn, fp = tp + (g and v), fn + (g and not v), tn + (not g and not v), fp + (not g and v)
            f1s.append(_f1(tp, fp, fn))
            mccs.append(_mcc(tp, fn, tn, fp))
        for metric, reps in (("f1", f1s), ("matthews_corrcoef", mccs)):
            row = got[(run, metric)]
            assert row["B_used"] == 2000
            assert abs(row["lower"] - _quantile(reps, lower)) < TOL and abs(row["upper"] - _quantile(reps, upper)) < TOL


def test_mcnemar_against_the_best_f1_run_equals_scipy(built):
    stats = pytest.importorskip("scipy.stats")
    con, data = built
    best = {}
    for r in S.rows(con.execute("SELECT * FROM rel_metrics")):
        key = (-round(r["f1"], 4), r["model_id"], r["run_id"])
        if r["language"] not in best or key < best[r["language"]][0]:
            best[r["language"]] = (key, r["run_id"])
    got = {r["run_id"]: r for r in S.rows(con.execute("SELECT * FROM rel_mcnemar"))}
    for run, values in data.items():
        lang = run.split("-")[1]
        ref = data[best[lang][1]]
        if run == best[lang][1]:
            assert got[run]["mcnemar_p"] is None
            continue
        right = [v is not None and v == g for g, _, v in values]
        ref_right = [v is not None and v == g for g, _, v in ref]
        b = sum(1 for x, y in zip(ref_right, right) if x and not y)
        c = sum(1 for x, y in zip(ref_right, right) if y and not x)
        assert (got[run]["b"], got[run]["c"]) == (b, c)
        want = stats.binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0
        assert abs(got[run]["mcnemar_p"] - want) < 1e-9 * max(1.0, want), run
