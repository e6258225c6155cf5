"""`laya-cases calibrate --fit DEV --apply TEST`: recalibration fitted on one run, scored on another.

The fit never sees the run it is scored on (HELM fits Platt scaling on the very examples it then
scores, which flatters it): DEV and TEST must be different runs sharing no case id (a case id is a
digest of the state, question and options, so the same dataset row in both runs shares it).

* Temperature scaling: one temperature per temperature bucket (S2.6) where the run stores them (Laya
  runs), else one for the run ('all'). T minimises the mean negative log-likelihood of the gold option
  under softmax(logp / T) over DEV's usable cases (sql/calibration/scores.sql says what logp is). The
  NLL is convex in 1/T, so a golden-section search over 1/T in [1/T_MAX, 1/T_MIN] finds its minimum
  (to 1e-10 in 1/T); a minimum at a bound is reported as such. numpy only: scipy is not a dependency
  (tests check the values against scipy.optimize).
* `--platt` (noul answers): q = sigmoid(a * s + b), s = ln P(true) - ln P(false), (a, b) by Newton's
  method on the logistic log-likelihood of the label, pooled over DEV's noul cases. Unlike a
  temperature it can move the 0.5 cut, so it can change noul predictions and accuracy.

A TEST bucket DEV lacks gets DEV's pooled temperature (`fitted_on` says which). What the numbers do to
TEST is SQL (calibration/apply.sql, then summary, reliability, equal-mass and class-wise ECE), for the
stored run (before, T = 1) and the recalibrated one (after), over the same cases.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import sql as S

SCHEMA = "laya-cases-calibration/1"
T_MIN, T_MAX = 0.01, 100.0
POOLED = "all"
#: (document key, printed name) of the before/after table, in print order (terminal and HTML)
METRICS = [("accuracy", "accuracy"), ("mean_confidence", "mean_confidence"), ("ece", "ece"),
           ("ece_equal_mass", "ece_equal_mass"), ("ece_classwise", "ece_classwise"), ("brier", "brier"),
           ("nll", "nll"), ("selective_accuracy_50", "selective_accuracy@50"),
           ("selective_accuracy_80", "selective_accuracy@80")]


# ---------------------------------------------------------------------------- the fit (numpy)
def _matrix(logps: Sequence[Sequence[float]]) -> np.ndarray:
    """Ragged log-score lists as one matrix, padded with -inf (probability 0 at every temperature)."""
    k = max(len(z) for z in logps)
    out = np.full((len(logps), k), -np.inf)
    for i, z in enumerate(logps):
        out[i, :len(z)] = z
    return out


def nll(z: np.ndarray, gold: np.ndarray, temperature: float) -> float:
    """Mean of -ln softmax(z / T)[gold] (max-subtracted logsumexp)."""
    s = z / temperature
    top = s.max(axis=1)
    lse = top + np.log(np.exp(s - top[:, None]).sum(axis=1))
    return float(np.mean(lse - s[np.arange(len(gold)), gold]))


def fit_temperature(logps: Sequence[Sequence[float]], gold: Sequence[int]) -> Tuple[float, bool]:
    """(T minimising nll, whether it sits at a bound of [T_MIN, T_MAX])."""
    z, g = _matrix(logps), np.asarray(gold, dtype=np.int64)
    f = lambda beta: nll(z, g, 1.0 / beta)                     # convex in beta = 1/T
    lo, hi = 1.0 / T_MAX, 1.0 / T_MIN
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = f(a), f(b)
    while hi - lo > 1e-10 * max(1.0, lo):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = f(b)
    beta = (lo + hi) / 2.0
    for edge in (1.0 / T_MAX, 1.0 / T_MIN):                  # a flat or monotone loss ends at a bound
        if f(edge) <= f(beta):
            beta = edge
    at_bound = beta <= 1.0 / T_MAX * (1 + 1e-6) or beta >= 1.0 / T_MIN * (1 - 1e-6)
    return 1.0 / beta, at_bound


def _logistic_loss(a: float, b: float, s: np.ndarray, y: np.ndarray) -> float:
    m = a * s + b
    return float(np.mean(np.logaddexp(0.0, m) - y * m))


def fit_platt(s: Sequence[float], y: Sequence[int]) -> Tuple[float, float]:
    """(a, b) minimising the mean logistic loss of y (0/1) given a * s + b: Newton steps, halved while
    the loss does not fall (separable data has no finite minimum: the steps stop after 100)."""
    s, y = np.asarray(s, dtype=float), np.asarray(y, dtype=float)
    w = np.array([1.0, 0.0])
    x = np.column_stack([s, np.ones_like(s)])
    loss = _logistic_loss(w[0], w[1], s, y)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y)
        hess = (x * (p * (1 - p))[:, None]).T @ x / len(y) + 1e-12 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-8:
            cand = w - t * step
            new = _logistic_loss(cand[0], cand[1], s, y)
            if new <= loss:
                break
            t /= 2
        else:
            break
        done = abs(loss - new) < 1e-15
        w, loss = cand, new
        if done or np.max(np.abs(t * step)) < 1e-12:
            break
    return float(w[0]), float(w[1])


def separable(s: Sequence[float], y: Sequence[int]) -> bool:
    """Whether one cut on s splits the labels perfectly (one label alone counts): then the logistic loss
    has no finite minimum and Platt's (a, b) is only where the steps stopped."""
    pos = [x for x, label in zip(s, y) if label]
    neg = [x for x, label in zip(s, y) if not label]
    return not pos or not neg or max(neg) < min(pos) or max(pos) < min(neg)


# ---------------------------------------------------------------------------- runs
def _scores(con, run_id: str, table: str) -> Dict[str, int]:
    """Materialise calib_scores of one run under `table`; returns its counts."""
    S.materialize(con, "calibration/scores.sql", table, {"run_id": run_id})
    paired, usable = con.execute("SELECT count(*), count(*) FILTER (WHERE usable) FROM %s" % S.quote_ident(table)).fetchone()
    if not usable:
        raise UsageError("run %s has no choice or noul case with stored logits or probabilities and a gold "
                         "option to recalibrate (%d paired case(s))" % (shorten(repr(run_id)), paired))
    return {"paired": int(paired), "usable": int(usable)}


def check_held_out(con, dev: str, test: str) -> None:
    """Refuse a fit scored on its own cases: the same run, or runs sharing a case id."""
    if dev == test:
        raise UsageError("--fit and --apply name the same run %s: a recalibration is scored on a run it was "
                         "not fitted on" % shorten(repr(dev)))
    shared, example = con.execute(
        "SELECT count(*), min(case_id) FROM (SELECT DISTINCT case_id FROM cases WHERE run_id = ? "
        "INTERSECT SELECT DISTINCT case_id FROM cases WHERE run_id = ?)", [dev, test]).fetchone()
    if shared:
        raise UsageError("runs %s and %s share %d case id(s) (e.g. %s): the same rows were asked in both, so the "
                         "fit would be scored on what it saw; fit on other rows"
                         % (shorten(repr(dev)), shorten(repr(test)), shared, shorten(str(example), 40)))


def fit(con, dev: str, platt: bool = False) -> Tuple[Dict[str, int], List[Dict[str, Any]]]:
    """(DEV's case counts, the fitted parameters: one row per group, a temperature per bucket plus the
    pooled 'all', and with `platt` one (a, b) row for the noul answers)."""
    counts = _scores(con, dev, "calib_dev")
    rows = con.execute("SELECT bucket, answer_type, logp, gold FROM calib_dev WHERE usable "
                       "ORDER BY bucket, case_id").fetchall()
    groups: Dict[str, List[Tuple[List[float], int]]] = {}
    for bucket, _, logp, gold in rows:
        groups.setdefault(bucket, []).append((logp, gold))
    if POOLED not in groups:
        groups[POOLED] = [(logp, gold) for _, _, logp, gold in rows]
    out = []
    for bucket in sorted(groups):
        logps, golds = [g[0] for g in groups[bucket]], [g[1] for g in groups[bucket]]
        t, at_bound = fit_temperature(logps, golds)
        z, g = _matrix(logps), np.asarray(golds)
        out.append({"group": bucket, "method": "temperature", "n": len(golds), "temperature": t,
                    "at_bound": at_bound, "nll_before": nll(z, g, 1.0), "nll_after": nll(z, g, t)})
    if platt:
        noul = [(logp, gold) for _, kind, logp, gold in rows if kind == "noul"]
        if not noul:
            raise UsageError("--platt: run %s has no usable noul case to fit Platt scaling on" % shorten(repr(dev)))
        s = [logp[1] - logp[0] for logp, _ in noul]
        y = [gold for _, gold in noul]
        a, b = fit_platt(s, y)
        out.append({"group": "noul", "method": "platt", "n": len(y), "a": a, "b": b, "separable": separable(s, y),
                    "nll_before": _logistic_loss(1.0, 0.0, np.asarray(s), np.asarray(y, dtype=float)),
                    "nll_after": _logistic_loss(a, b, np.asarray(s), np.asarray(y, dtype=float))})
    return counts, out


def _params(con, fitted: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """calib_params for calib_scores (the run being scored): each (bucket, answer_type) gets its bucket's
    temperature, else the pooled one; noul answers Platt's (a, b) when fitted."""
    temps = {r["group"]: r["temperature"] for r in fitted if r["method"] == "temperature"}
    platt = next((r for r in fitted if r["method"] == "platt"), None)
    keys = con.execute("SELECT DISTINCT bucket, answer_type FROM calib_scores WHERE usable ORDER BY ALL").fetchall()
    out = []
    for bucket, kind in keys:
        row = {"bucket": bucket, "answer_type": kind, "fitted_on": bucket if bucket in temps else POOLED,
               "temperature": temps.get(bucket, temps[POOLED]), "platt_a": None, "platt_b": None}
        if platt is not None and kind == "noul":
            row.update(fitted_on="platt", platt_a=platt["a"], platt_b=platt["b"])
        out.append(row)
    con.execute("CREATE OR REPLACE TEMP TABLE calib_params (bucket VARCHAR, answer_type VARCHAR, "
                "temperature DOUBLE, platt_a DOUBLE, platt_b DOUBLE)")
    con.executemany("INSERT INTO calib_params VALUES (?, ?, ?, ?, ?)",
                    [[r["bucket"], r["answer_type"], r["temperature"], r["platt_a"], r["platt_b"]] for r in out])
    return out


def score(con, test: str, fitted: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Before/after numbers of `test` under the fitted parameters (all SQL)."""
    counts = _scores(con, test, "calib_scores")
    applied = _params(con, fitted)
    S.materialize(con, "calibration/apply.sql", "calib_applied")
    S.materialize(con, "calibration/reliability.sql", "calib_reliability")
    phases = {r["phase"]: r for r in S.rows(S.query(con, "calibration/summary.sql"))}
    for name in ("ece_equal_mass", "ece_classwise"):
        for r in S.rows(S.query(con, "calibration/%s.sql" % name)):
            phases[r["phase"]][name] = r[name]
    for r in phases.values():
        r.setdefault("ece_classwise", None)
    bins = S.rows(con.execute("SELECT * FROM calib_reliability ORDER BY phase DESC, bin"))
    return {"cases": counts, "applied": applied, "before": phases["before"], "after": phases["after"],
            "reliability": {p: [dict((k, v) for k, v in b.items() if k not in ("phase", "n")) for b in bins
                                if b["phase"] == p] for p in ("before", "after")}}


def calibrate(wh, dev: str, test: str, platt: bool = False) -> Dict[str, Any]:
    """The calibration document: the fit on `dev` and its effect on `test`."""
    wh.require_run(dev)
    wh.require_run(test)
    con = S.connect(wh, sorted({dev, test}))
    check_held_out(con, dev, test)
    dev_counts, fitted = fit(con, dev, platt)
    return {"schema": SCHEMA, "fit_run": dev, "apply_run": test, "platt": platt,
            "fit": {"cases": dev_counts, "groups": fitted}, "apply": score(con, test, fitted)}
