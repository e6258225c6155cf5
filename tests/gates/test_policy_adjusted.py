"""Policy rules over many slices (issue 34 item 4): `adjust` (Holm / Benjamini-Hochberg over every
significant_at rule) and `on_insufficient` (the paired bootstrap interval of the delta reaches both
-bound and +bound), checked on random synthetic report documents against independent Python: scipy's
exact binomial test, a hand numpy Holm/BH (tests/multiple_testing.py), and a bootstrap drawn with
CPython's random.Random(0).randrange over case positions with numpy's linear quantile."""
from __future__ import annotations

import json
import math
import random
from typing import Dict, List

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from laya_cases.core.errors import UsageError
from laya_cases.gates import runner as G
from laya_cases.query import resample
from laya_cases_cli.app import app
from multiple_testing import adjust
from policy_data import documents, policy

def judge(candidate, baseline, pol):
    con = G.connect()
    G.load_report_tables(con, {"candidate": candidate, "baseline": baseline})
    return G.check_policy(con, candidate["config"], pol, baseline)


@pytest.mark.slow
def test_adjusted_verdicts_equal_numpy_holm_and_bh():
    for seed in (1, 2, 3):
        for method in ("holm", "bh"):
            check_adjusted(seed, method)


def check_adjusted(seed, method):
    k = 12
    candidate, baseline, cand, base = documents(seed, k)
    pol = policy(k, adjust=method)
    pol["rules"].append(dict(pol["rules"][1], slice={"language": "nowhere"}))   # a missing slice: no test
    failures, measures = judge(candidate, baseline, pol)
    raw = []
    for s in range(k + 1):
        pairs = [(b[1], c[1]) for b, c in zip(base, cand) if b[0] == "L%02d" % s]
        r2w = sum(1 for b, c in pairs if b == 1.0 and c == 0.0)
        w2r = sum(1 for b, c in pairs if b == 0.0 and c == 1.0)
        raw.append(binomtest(r2w, r2w + w2r, 0.5).pvalue if r2w + w2r else math.nan)
    want = adjust(raw)
    failing = set()
    for m, (size, h, b) in zip(measures, want):
        for got, expected in ((m["holm_p"], h), (m["bh_p"], b)):
            assert got == expected if expected is None else got == pytest.approx(expected, rel=1e-12)
        assert m["adjusted_p"] == (m["holm_p"] if method == "holm" else m["bh_p"])
        if m["current"] is None:
            assert m["failure"] == "missing"
            failing.add(m["pos"])
            continue
        exceeded = m["drift"] > 0.02 and not math.isclose(m["drift"], 0.02, rel_tol=1e-12, abs_tol=1e-12)
        adjusted = h if method == "holm" else b
        if exceeded and adjusted is not None and adjusted < 0.05:
            assert m["failure"] == "significant" and m["verdict"] == "fail"
            failing.add(m["pos"])
        else:
            assert m["failure"] is None and m["verdict"] == "pass"
    assert sum(size for size, _h, _b in want[:1]) == sum(1 for p in raw if not math.isnan(p))
    assert [int(line.split()[3]) for line in failures] == sorted(failing)
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[method]
    assert all("(%s p=" % name in line for line in failures if "exceeded" in line)


def python_intervals(cand, base, replicates: int = 2000) -> Dict[str, List[float]]:
    """Resample candidate case positions (randrange over all of them); each slice's delta per replicate."""
    n = len(cand)
    rng = random.Random(0)
    deltas: Dict[str, List[float]] = {}
    for _ in range(replicates):
        drawn = [rng.randrange(n) for _ in range(n)]
        for lang in {cand[i][0] for i in drawn}:
            picked = [i for i in drawn if cand[i][0] == lang]
            deltas.setdefault(lang, []).append((sum(cand[i][1] for i in picked) - sum(base[i][1] for i in picked))
                                               / len(picked))
    return {lang: [float(np.quantile(d, 0.025)), float(np.quantile(d, 0.975))] for lang, d in deltas.items()}


@pytest.mark.slow
@pytest.mark.parametrize("count_as_drawn", [False, True])
def test_on_insufficient_marks_a_too_wide_interval_and_fails_only_when_asked(count_as_drawn, monkeypatch):
    """Either way of counting the draws per class of cases (query/resample.class_counts) gives the
    intervals of S9.5 by hand."""
    if count_as_drawn:
        monkeypatch.setattr(resample, "COUNT_AS_DRAWN", 1)
        monkeypatch.setattr(resample._Words, "CHUNK", 61)
    k = 8
    candidate, baseline, cand, base = documents(7, k)       # L03 [-0.88, +0.19], L07 [-0.28, +0.10]: too wide
    bound = 0.1
    judged = {}
    for choice in ("pass", "fail"):
        pol = policy(k, on_insufficient=choice)
        for rule in pol["rules"]:
            rule["max_drop"] = bound
        judged[choice] = judge(candidate, baseline, pol)
    plain = judge(candidate, baseline, {"version": 1, "rules": [dict(r, max_drop=bound) for r in policy(k)["rules"]]})
    seen = set()
    intervals = python_intervals(cand, base)
    for s in range(k):
        lo, hi = intervals.get("L%02d" % s, (math.nan, math.nan))
        for choice, (failures, measures) in judged.items():
            m = measures[s]
            if m["current"] is None:                  # the empty slice: missing stands before any evidence
                assert m["failure"] == "missing"
                continue
            assert (m["ci_lower"], m["ci_upper"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
            insufficient = lo <= -bound and hi >= bound
            seen.add(insufficient)
            assert m["insufficient_evidence"] is insufficient
            if insufficient:
                assert m["verdict"] == "insufficient"
                assert m["failure"] == (None if choice == "pass" else "insufficient")
            else:
                assert (m["verdict"], m["failure"]) == (plain[1][s]["verdict"], plain[1][s]["failure"])
    assert seen == {True, False}                      # both kinds of slice are in the data
    notes = G.note_lines(judged["pass"][1])
    assert notes and all("insufficient evidence: the 95% interval [" in n and "(on_insufficient: pass)" in n
                         for n in notes)
    assert len([f for f in judged["fail"][0] if "insufficient evidence" in f]) == len(notes)
    assert not any("insufficient" in f for f in judged["pass"][0])


@pytest.mark.parametrize("extra, message", [
    ({"adjust": "holm"}, "adjust must be 'holm' or 'bh' on a rule with significant_at"),
    ({"adjust": "bonferroni", "significant_at": 0.05}, "adjust must be 'holm' or 'bh'"),
    ({"on_insufficient": "warn", "significant_at": 0.05}, "on_insufficient must be 'pass' or 'fail'"),
    ({"on_insufficient": "fail"}, "on_insufficient must be 'pass' or 'fail' on a rule with significant_at"),
])
def test_new_keys_are_validated_up_front(tmp_path, extra, message):
    body = {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.0, **extra}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"version": 1, "rules": [body]}))
    with pytest.raises(UsageError, match=r"policy.json: gate policy rule 1 ") as ours:
        G.load_policy(str(path))
    assert message in str(ours.value)


@pytest.mark.slow
@pytest.mark.parametrize("choice, code", [("pass", 0), ("fail", 1)])
def test_compare_exit_code_follows_on_insufficient(tmp_path, choice, code):
    candidate, baseline, _c, _b = documents(7, 8)
    for name, doc in (("cand", candidate), ("base", baseline)):
        (tmp_path / ("%s.json" % name)).write_text(json.dumps(doc))
    rule = {"slice": {"language": "L03"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.1,
            "significant_at": 0.05, "on_insufficient": choice}
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "rules": [rule]}))
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "cand.json"), "--baseline", str(tmp_path / "base.json"),
                                      "--gate-policy", str(tmp_path / "p.json")])
    assert result.exit_code == code, result.stderr
    word = "NOTE" if choice == "pass" else "FAIL"
    assert [l.split(":")[0] for l in result.stderr.splitlines()] == [word], result.stderr
    assert "insufficient evidence" in result.stderr
