"""Differential test against the reference (S0.1): random answer sets, the same rows fed to
`laya.evals.evaluate` through a scripted runner and to ingest -> warehouse -> sql/ -> report.

The generator leans on what breaks metric code: tied confidences from a small pool, NaN, +-inf,
values outside [0, 1], -0.0, booleans and ints where floats are expected (S2.7), missing and
mistyped labels (S1.3, S2.9), answer types that disagree with the question (S2.9), odd slice
values (S4.1: non-string languages and models, duplicate and non-string tags) and several
--score-within tolerances (S3.7).
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, List

import numpy as np
import pytest

from report_path import Store, close, report_diffs, same_bits

pytestmark = pytest.mark.slow   # 150 random answer sets through the reference and through the store

laya_evals = pytest.importorskip("laya.evals")

SEED = 20240611
N_SETS = 150
NAN, INF = math.nan, math.inf
CONF_POOL = [0.0, -0.0, 1 / 15, 0.1, 0.2, 0.3, 0.5, 0.5, 0.6, 0.7, 0.7, 0.7333333333333334, 0.8, 0.9, 0.9,
             1.0, 1.0, 1e-30, 2.0 ** -60, 0.30000000000000004]
ODD_CONF = [NAN, -0.1, 1.2, 1.5, -0.25, 1, 0, True, False, "0.9", None]
LANGUAGES = ["en", "de", "", 5, True, 1.5, [1], {"a": 1}, None, "zh", "a|b", "ünï\ncode"]
MODELS = [None, None, "m1", "m2", "", 0, 7, False]
TAGS = [None, [], ["vip"], ["vip", "vip"], ["vip", "hard"], [1, None, "x"], [True], "", 0, ["hard"], ["a|b", 2.0]]
TOLERANCES = [0.0, 0.25, 0.5, 1, 1e-5, 2.5, 0.4]


def _conf(rng: random.Random, inf_sign: float) -> Any:
    r = rng.random()
    if r < 0.7:
        return rng.choice(CONF_POOL)
    if r < 0.93:
        return rng.choice(ODD_CONF)
    return inf_sign * INF


def _confidence_fields(rng: random.Random, answer: Dict[str, Any], labels: List[str], inf_sign: float) -> None:
    """One of the S2.7 fallback shapes, chosen at random."""
    shape = rng.randrange(6)
    if shape in (0, 1):                                   # answer_confidence (maybe unusable)
        answer["answer_confidence"] = _conf(rng, inf_sign)
    if shape in (1, 2):                                   # confidence: the second link
        answer["confidence"] = _conf(rng, inf_sign)
    if shape == 3:                                        # a boolean answer_confidence is skipped
        answer["answer_confidence"] = rng.choice([True, False])
        if rng.random() < 0.7:
            answer["confidence"] = _conf(rng, inf_sign)
    if shape in (4, 3) or rng.random() < 0.3:             # probabilities: the last link
        if rng.random() < 0.15:
            answer["probabilities"] = {}
        else:
            answer["probabilities"] = {lab: rng.choice(CONF_POOL[:16] + [NAN, 1.2]) for lab in labels}
    # shape 5: nothing but the answer itself (noul still falls back to max(p, 1 - p))


def _answer(rng: random.Random, qtype: str, inf_sign: float) -> Dict[str, Any]:
    answer: Dict[str, Any] = {"type": qtype}
    if qtype == "choice":
        if rng.random() < 0.95:
            answer["choice"] = rng.choice(["a", "b", "c", "a", 5, None])
        _confidence_fields(rng, answer, ["a", "b", "c"], inf_sign)
    elif qtype == "noul":
        if rng.random() < 0.9:                            # missing noul reads 0.0
            answer["noul"] = rng.choice([0.0, 0.2, 0.3, 0.5, 0.5, 0.7, 0.8, 1.0, 1, 0, True, NAN, 0.49999999999999994])
        _confidence_fields(rng, answer, ["false", "true"], inf_sign)
    else:
        if rng.random() < 0.9:                            # missing score reads 0.0
            answer["score"] = rng.choice([0.0, 0.5, 1.0, 1.6, 2.0, 1.25, 2, True, NAN, INF, -INF, 0.3999999999999999])
        _confidence_fields(rng, answer, ["0", "1", "2"], inf_sign)
    return answer


def _label(rng: random.Random, qtype: str) -> Any:
    if rng.random() < 0.2:                                # mistyped or null (S1.3): unscored
        return rng.choice([None, 1, 0, "yes", True, [1], {"x": 1}, 2.5, "a"])
    return {"choice": lambda: rng.choice(["a", "b", "c"]),
            "noul": lambda: rng.choice([True, False]),
            "score": lambda: rng.choice([0, 1, 2, 1.5, 2.0, -1])}[qtype]()


QUESTIONS = {"intent": {"type": "choice", "instructions": "i", "criteria": ["a", "b", "c"]},
             "spam": {"type": "noul", "instructions": "s"},
             "urgency": {"type": "score", "instructions": "u", "criteria": ["low", "mid", "high"]},
             "topic": {"type": "choice", "instructions": "t", "criteria": {"a": "x", "b": None}}}
QTYPE = {"intent": "choice", "spam": "noul", "urgency": "score", "topic": "choice"}


def make_set(rng: random.Random) -> List[Dict[str, Any]]:
    inf_sign = rng.choice([1.0, -1.0])                    # fsum raises on +inf with -inf: one sign per set
    n_rows = rng.randint(1, 30)
    rows = []
    for i in range(n_rows):
        qids = rng.sample(sorted(QUESTIONS), rng.randint(1, 3))
        questions = {q: QUESTIONS[q] for q in qids}
        expected = {q: _label(rng, QTYPE[q]) for q in qids if rng.random() < 0.85}
        answers = {}
        for q in qids:
            qtype = QTYPE[q] if rng.random() < 0.9 else rng.choice(["choice", "noul", "score"])  # S2.9
            answers[q] = _answer(rng, qtype, inf_sign)
        row: Dict[str, Any] = {"state": "s%d" % i, "questions": questions, "expected": expected,
                               "answers": answers}
        if rng.random() < 0.8:
            row["language"] = rng.choice(LANGUAGES)
        if rng.random() < 0.4:
            row["model"] = rng.choice(MODELS)
        if rng.random() < 0.6:
            row["tags"] = rng.choice(TAGS)
        rows.append(row)
    return rows


class ScriptedRunner:
    """Answers each state with its recorded answers, as the spec's Appendix A prescribes."""

    def __init__(self, rows: List[Dict[str, Any]]):
        self.by_state = {row["state"]: row["answers"] for row in rows}

    def predict(self, state, questions, model=None):
        return {"answers": self.by_state[state]}


def reference(rows: List[Dict[str, Any]], tolerances: List[float]):
    from laya.evals import Dataset, Example, ScoreWithin, default_evaluators, evaluate

    dataset = Dataset([Example.from_dict(row) for row in rows])
    evaluators = default_evaluators() + [ScoreWithin(t) for t in tolerances]
    report = evaluate(ScriptedRunner(rows), dataset, evaluators=evaluators)
    overall = {k: v for k, v in report.overall.items() if not k.endswith("_ms")}   # wall-clock timing
    return overall, report.slices, report.cases


def case_diffs(ours: List[Dict[str, Any]], ref: List[Dict[str, Any]]) -> List[str]:
    """The reference `cases` list, in order (S4.4), NaN-aware."""
    if len(ours) != len(ref):
        return ["cases: %d vs reference %d" % (len(ours), len(ref))]
    problems = []
    for i, (a, b) in enumerate(zip(ours, ref)):
        for key in ("qid", "language", "model", "tags", "correct"):
            if a[key] != b[key]:
                problems.append("cases[%d].%s: %r vs %r" % (i, key, a[key], b[key]))
        if not (a["confidence"] is b["confidence"] is None or
                (a["confidence"] is not None and b["confidence"] is not None
                 and same_bits(a["confidence"], b["confidence"]))):
            problems.append("cases[%d].confidence: %r vs %r" % (i, a["confidence"], b["confidence"]))
        if set(a["scores"]) != set(b["scores"]):
            problems.append("cases[%d].scores keys differ" % i)
        for name, value in b["scores"].items():
            mine = a["scores"].get(name)
            if not (mine is value is None or (mine is not None and value is not None and same_bits(mine, value))):
                problems.append("cases[%d].scores.%s: %r vs %r" % (i, name, mine, value))
    return problems


def independent_diffs(doc: Dict[str, Any], ref_cases: List[Dict[str, Any]]) -> List[str]:
    """Overall metrics from the case list with numpy / math.fsum, independent of sql/ (S3.3, S9.8)."""
    problems = []
    o = doc["overall"]
    paired = [(c["confidence"], c["correct"]) for c in ref_cases
              if c["confidence"] is not None and c["correct"] is not None]
    choice = [c["scores"]["choice_accuracy"] for c in ref_cases if c["scores"]["choice_accuracy"] is not None]
    if choice:
        acc = np.mean(np.asarray(choice) == 1.0)
        if not close(o.get("choice_accuracy"), float(acc)):
            problems.append("choice_accuracy %r vs numpy %r" % (o.get("choice_accuracy"), acc))
    problems += _count_diffs(doc["extensions"]["overall"], ref_cases, paired)
    if paired:
        conf = np.array([p[0] for p in paired], dtype=float)
        ok = np.array([p[1] for p in paired], dtype=float)
        squares = (conf - ok) ** 2
        exact = math.fsum(squares) if np.all(np.isfinite(squares)) else float(np.sum(squares))
        brier = exact / len(paired)
        if math.isnan(brier):
            if "brier" in o:
                problems.append("brier %r published although NaN" % o["brier"])
        elif not same_bits(o.get("brier"), brier):                       # S9.8: fsum, one division
            problems.append("brier %r vs fsum/N %r" % (o.get("brier"), brier))
        elif not close(brier, float(np.mean(squares))):
            problems.append("brier %r vs numpy mean %r" % (brier, np.mean(squares)))
        problems += _coverage_diffs(o, paired)
        ece = doc["extensions"]["overall"]["reliability"]
        total = 0.0
        for b, entry in enumerate(ece):
            lo, hi = b / 15, (b + 1) / 15
            sel = ((conf >= lo) if b == 0 else (conf > lo)) & (conf <= hi)
            if entry["n_b"] != int(sel.sum()):
                problems.append("bin %d holds %r, numpy says %d" % (b, entry["n_b"], sel.sum()))
            if entry["too_small"] != bool(sel.sum() < 10):                 # fewer than 10 cases, empty included
                problems.append("bin %d too_small %r with %d cases" % (b, entry["too_small"], sel.sum()))
            if sel.any():
                term = (sel.sum() / len(conf)) * abs(math.fsum(conf[sel]) / sel.sum() - ok[sel].mean())
                total += term
        if not same_bits(o["ece"], total):                                 # S9.8: bin order, exact bin means
            problems.append("ece %r vs independent %r" % (o["ece"], total))
    return problems


def _count_diffs(ext: Dict[str, Any], ref_cases: List[Dict[str, Any]], paired) -> List[str]:
    """S9.2: the denominators and numerators published beside each overall ratio."""
    want: Dict[str, Dict[str, Any]] = {}
    for name in ("choice_accuracy", "noul_accuracy"):
        values = [c["scores"][name] for c in ref_cases if c["scores"][name] is not None]
        want[name] = {"n": len(values), "hits": int(sum(values))} if values else \
            {"n": 0, "reason": "no_applicable_case"}
    for name in ("score_mae", "mean_confidence"):
        n = sum(c["scores"][name] is not None for c in ref_cases)
        want[name] = {"n": n} if n else {"n": 0, "reason": "no_applicable_case"}
    problems = ["extensions.overall.%s %r, expected %r" % (k, ext.get(k), v) for k, v in want.items() if ext.get(k) != v]
    if paired:
        confs = [c for c, _ in paired]
        unbinned = (sum(1 for c in confs if not math.isnan(c) and not 0.0 <= c <= 1.0),
                    sum(1 for c in confs if math.isnan(c)))
        got = (ext["ece"]["n_paired"], ext["ece"]["n_unbinned_out_of_range"], ext["ece"]["n_unbinned_nan"])
        if got != (len(paired),) + unbinned:
            problems.append("ece counts %r, expected %r" % (got, (len(paired),) + unbinned))
    return problems


def _coverage_diffs(o: Dict[str, float], paired) -> List[str]:
    """aurc and the tie-aware cuts from a plain Python sort (S3.12-S3.14, S9.8 level order)."""
    levels: Dict[Any, List[int]] = {}
    for conf, ok in paired:
        key = "nan" if math.isnan(conf) else conf + 0.0          # NaNs are one level; -0.0 is 0.0
        levels.setdefault(key, [0, 0])
        levels[key][0] += 1
        levels[key][1] += bool(ok)
    order = sorted(levels, key=lambda k: (k == "nan", 0.0 if k == "nan" else -k))
    n, accepted, hits, terms, cuts = len(paired), 0, 0, [], []
    for key in order:
        rows, ok = levels[key]
        accepted, hits = accepted + rows, hits + ok
        terms.append((1.0 - hits / accepted) * rows)
        cuts.append((accepted, hits))
    problems = []
    if not same_bits(o["aurc"], math.fsum(terms) / n):
        problems.append("aurc %r vs fsum over levels %r" % (o["aurc"], math.fsum(terms) / n))
    for cov in (0.5, 0.8):
        k = max(1, math.ceil(cov * n))
        accepted, hits = next(c for c in cuts if c[0] >= k)
        name = "selective_accuracy@%d" % round(cov * 100)
        if o[name] != hits / accepted:
            problems.append("%s %r vs %r" % (name, o[name], hits / accepted))
    return problems


def test_differential_against_the_reference(tmp_path):
    """S0.1 on 150 random answer sets: overall, every slice, and the cases list."""
    rng = random.Random(SEED)
    store = Store(tmp_path)
    failures: List[str] = []
    compared = skipped = 0
    for index in range(N_SETS):
        rows = make_set(rng)
        tolerances = rng.sample(TOLERANCES, rng.randint(0, 3))
        try:
            ref_overall, ref_slices, ref_cases = reference(rows, tolerances)
        except (ValueError, OverflowError) as exc:       # fsum(+inf, -inf) in some slice: no reference value
            assert "fsum" in str(exc), exc
            skipped += 1
            continue
        doc = store.report(rows, score_within=tolerances)
        problems = report_diffs(doc, ref_overall, ref_slices)
        problems += case_diffs(doc["cases"], ref_cases)
        problems += independent_diffs(doc, ref_cases)
        compared += 1
        if problems:
            failures.append("set %d (%d rows, tolerances %r):\n  %s" % (index, len(rows), tolerances,
                                                                        "\n  ".join(problems[:8])))
    assert not failures, "\n".join(failures[:5])
    assert compared >= 0.9 * N_SETS and skipped <= 0.1 * N_SETS


def test_generator_reaches_the_edges():
    """The generator must actually produce the inputs this file claims to cover (no tautology)."""
    rng = random.Random(SEED)
    seen = set()
    for _ in range(N_SETS):
        for row in make_set(rng):
            for qid, answer in row["answers"].items():
                for key in ("answer_confidence", "confidence"):
                    v = answer.get(key)
                    if isinstance(v, bool):
                        seen.add("bool " + key)
                    elif isinstance(v, float) and math.isnan(v):
                        seen.add("nan")
                    elif isinstance(v, float) and math.isinf(v):
                        seen.add("inf")
                    elif isinstance(v, (int, float)) and not 0 <= v <= 1:
                        seen.add("out of range")
                if "answer_confidence" not in answer and "confidence" not in answer:
                    seen.add("probabilities only" if answer.get("probabilities") else "no confidence field")
                if answer["type"] != QTYPE[qid]:
                    seen.add("type mismatch")
            for label in row["expected"].values():
                seen.add("label " + type(label).__name__)
            if isinstance(row.get("language"), (int, float, list, dict)):
                seen.add("odd language")
            if isinstance(row.get("tags"), list) and len(set(map(str, row["tags"]))) < len(row["tags"]):
                seen.add("duplicate tag")
    assert {"bool answer_confidence", "nan", "inf", "out of range", "probabilities only",
            "no confidence field", "type mismatch", "label NoneType", "label int", "label bool",
            "label str", "label list", "odd language", "duplicate tag"} <= seen


def test_close_score_within_tolerances_collide_like_the_reference(tmp_path):
    """S3.7: 0.39999999 and 0.4 are both `score_within_0.4`; the later evaluator wins, as in the reference."""
    rows = [{"state": "s0", "questions": {"u": QUESTIONS["urgency"]}, "expected": {"u": 2},
             "answers": {"u": {"type": "score", "score": 1.6, "answer_confidence": 0.5}}}]
    store = Store(tmp_path)
    for tolerances in ([0.39999999, 0.4], [0.4, 0.39999999]):
        ref_overall, ref_slices, ref_cases = reference(rows, tolerances)
        doc = store.report(rows, score_within=tolerances)
        assert report_diffs(doc, ref_overall, ref_slices) == []
        assert case_diffs(doc["cases"], ref_cases) == []
        assert doc["overall"]["score_within_0.4"] == (1.0 if tolerances[-1] == 0.4 else 0.0)


def _extreme(rng: random.Random) -> float:
    """A value whose bits reach below 2^-116 or above 2^103, where a float remainder would round."""
    exponent = rng.choice([0, -53, -60, -106, -116, -117, -120, -150, -300, -1022, -1074, 60, 102, 103, 104, 200])
    mantissa = rng.choice([1.0, 1.5, 1 + 2.0 ** -52, rng.random() + 0.5])
    return math.ldexp(mantissa, exponent) * rng.choice([1, -1])


def test_exact_sums_hold_at_extreme_magnitudes(tmp_path):
    """S3.3 / S9.8: mean_confidence and score_mae are fsum / n bit for bit even for subnormal,
    tiny and huge values repeated as ties (each tie is one cell of weight n in sql/)."""
    rng = random.Random(7)
    rows = []
    for group in range(40):
        values = [_extreme(rng) for _ in range(rng.randint(1, 5))]
        if group % 4 == 0:
            values += [1.0, 2.0 ** -53]                  # an exact tie that the smallest bits must break
        for v in values:
            for _ in range(rng.randint(1, 4)):
                qid = "g%02d" % group
                rows.append({"state": "s%d" % len(rows), "questions": {qid: QUESTIONS["urgency"]},
                             "expected": {qid: 0}, "answers": {qid: {"type": "score", "score": v,
                                                                     "answer_confidence": v}}})
    ref_overall, ref_slices, ref_cases = reference(rows, [])
    doc = Store(tmp_path).report(rows)
    assert report_diffs(doc, ref_overall, ref_slices) == []
    assert case_diffs(doc["cases"], ref_cases) == []
