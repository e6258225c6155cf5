"""Time the full report (overall + 4 slice dimensions, every metric with its counts) at 1M and 10M
synthetic decisions, against the reference's aggregation (laya.evals) and a vectorised numpy pass over
the same decisions. Prints seconds and ratios measured in the same run; asserts nothing.

    .venv/bin/python bench/report_bench.py [--sizes 1000000 10000000] [--reference-max 1000000]

The reference aggregates Python case dicts, so it is run only up to --reference-max decisions
(10M case dicts need ~10 GB); beyond that its time is shown as n/a.
"""
from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic as S  # noqa: E402

from laya_cases import report as R  # noqa: E402
from laya_cases.warehouse import Warehouse  # noqa: E402

EDGES = np.array([i / 15 for i in range(16)])


def numpy_group_metrics(conf, correct, is_choice, is_noul, err_mask, err):
    """Every published metric of one group, vectorised (the baseline a hand-rolled script would be)."""
    out = {}
    for name, mask in (("choice_accuracy", is_choice), ("noul_accuracy", is_noul)):
        if mask.any():
            out[name] = float(np.mean(correct[mask]))
    if err_mask.any():
        out["score_mae"] = float(np.mean(err[err_mask]))
    out["mean_confidence"] = float(np.mean(conf))
    paired = ~err_mask
    c, y = conf[paired], correct[paired]
    n = len(c)
    if n:
        inb = (c >= 0) & (c <= 1)
        bins = np.searchsorted(EDGES[1:15], c[inb], side="left")
        cnt = np.bincount(bins, minlength=15)
        sc = np.bincount(bins, weights=c[inb], minlength=15)
        sy = np.bincount(bins, weights=y[inb], minlength=15)
        nz = cnt > 0
        out["ece"] = float(np.sum(cnt[nz] / n * np.abs(sc[nz] / cnt[nz] - sy[nz] / cnt[nz])))
        out["brier"] = float(np.mean((c - y) ** 2))
        order = np.lexsort((-c, np.isnan(c)))
        cs, ys = c[order], y[order]
        both_nan = np.isnan(cs[1:]) & np.isnan(cs[:-1])                 # NaNs are one level (S3.12)
        boundary = np.concatenate(((cs[1:] != cs[:-1]) & ~both_nan, [True]))
        last = np.flatnonzero(boundary)
        accepted = last + 1.0
        hits = np.cumsum(ys)[last]
        rows = np.diff(np.concatenate(([0.0], accepted)))
        out["aurc"] = float(np.sum((1 - hits / accepted) * rows) / n)
        for cov in (0.5, 0.8):
            k = max(1, math.ceil(cov * n))
            lvl = np.searchsorted(accepted, k)
            out["selective_accuracy@%d" % round(cov * 100)] = float(hits[lvl] / accepted[lvl])
    return out


def numpy_report(d):
    q, conf, correct, err = d["q"], d["conf"], d["correct"].astype(float), d["err"]
    is_choice, is_noul, is_score = q == 0, q == 1, q == 2
    groups = {("overall", ""): np.ones(len(q), bool)}
    for dim, codes, names in (("language", d["lang"], S.LANGUAGES), ("model", d["model"], S.MODELS), ("qid", q, S.QIDS)):
        for i, name in enumerate(names):
            groups[(dim, name)] = codes == i
    for tag in ("vip", "hard"):
        groups[("tag", tag)] = np.isin(d["tags"], [i for i, t in enumerate(S.TAG_SETS) if tag in t])
    return {g: numpy_group_metrics(conf[m], correct[m], is_choice[m], is_noul[m], is_score[m], err[m])
            for g, m in groups.items()}


def reference_report(d):
    from laya import evals

    evaluators = evals.default_evaluators()
    cases = []
    for i in range(len(d["q"])):
        qi = int(d["q"][i])
        kind = S.TYPES[qi]
        correct = None if qi == 2 else bool(d["correct"][i])
        conf = float(d["conf"][i])
        scores = {"choice_accuracy": float(correct) if qi == 0 else None,
                  "noul_accuracy": float(correct) if qi == 1 else None,
                  "score_mae": float(d["err"][i]) if qi == 2 else None, "mean_confidence": conf}
        cases.append({"qid": S.QIDS[qi], "language": S.LANGUAGES[d["lang"][i]], "model": S.MODELS[d["model"][i]],
                      "tags": S.TAG_SETS[d["tags"][i]], "answer": {"type": kind}, "confidence": conf,
                      "correct": correct, "scores": scores})
    start = time.perf_counter()
    overall = evals._aggregate(cases, evaluators)
    slices = {dim: {k: evals._aggregate(g, evaluators) for k, g in evals._group_cases(cases, dim).items()}
              for dim in ("language", "model", "qid", "tag")}
    return time.perf_counter() - start, overall, slices


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--reference-max", type=int, default=1_000_000)
    args = ap.parse_args()
    print("%10s %12s %12s %12s %12s %12s" % ("decisions", "laya-cases s", "numpy s", "reference s",
                                            "numpy/ours", "ref/ours"))
    for n in args.sizes:
        tmp = Path(tempfile.mkdtemp(prefix="lc-bench-"))
        try:
            d = S.decisions(n)
            wh = Warehouse(tmp)
            S.write_run(wh, "bench", d)
            con = wh.connect(["bench"])
            R.build(con, "bench", R.Options(include_cases=False))          # warm the file cache
            t = time.perf_counter()
            doc = R.build(wh.connect(["bench"]), "bench", R.Options(include_cases=False))
            ours = time.perf_counter() - t
            t = time.perf_counter()
            nump = numpy_report(d)
            numpy_s = time.perf_counter() - t
            ref_s = None
            if n <= args.reference_max:
                ref_s, ref_overall, _ = reference_report(d)
                drift = max(abs(doc["overall"][k] - v) for k, v in ref_overall.items()
                            if k in doc["overall"] and not math.isnan(v))
                print("  max |ours - reference| over overall metrics: %.3g" % drift)
            drift_np = max(abs(doc["overall"].get(k, v) - v) for k, v in nump[("overall", "")].items()
                           if not math.isnan(v))
            print("  max |ours - numpy| over overall metrics: %.3g" % drift_np)
            print("%10d %12.3f %12.3f %12s %12.2f %12s" % (
                n, ours, numpy_s, "n/a" if ref_s is None else "%.3f" % ref_s, numpy_s / ours,
                "n/a" if ref_s is None else "%.2f" % (ref_s / ours)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
