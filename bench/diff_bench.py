"""Time `diff` of two synthetic runs of N decisions (run B = run A with a share of the cases' correctness
flipped), against `report A` on the same store in the same run. Each measurement runs in its own
subprocess, so its peak RSS (VmHWM) is its own. Prints seconds, ratios and MB; asserts nothing.

    .venv/bin/python bench/diff_bench.py [--sizes 200000 1000000] [--bootstrap 2000] [--flips 0.05]
        [--by language]

Rows: drawing the bootstrap's S9.5 stream alone (the B x N x 2^k / N 32-bit Mersenne Twister words of
B x N CPython randrange draws, k = N.bit_length(), on one core: the floor of any exact paired
bootstrap), `report A` (the baseline: the store read once, every metric), `diff A B` (flips, McNemar, the
paired bootstrap interval over dataset rows) and `diff A B --by language` (the same per language).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic as S  # noqa: E402
from report_bench import peak_mb  # noqa: E402

from laya_cases.store.warehouse import Warehouse  # noqa: E402


def child(args) -> dict:
    wh = Warehouse(args.store)
    if args.child == "write":
        d = S.decisions(args.n, distinct=True)
        S.write_run(wh, "a", d)
        flip = np.random.default_rng(1).random(args.n) < args.flips
        S.write_run(wh, "b", dict(d, correct=np.where(flip, ~d["correct"], d["correct"])))
        return {}
    t = time.perf_counter()
    if args.child == "floor":                  # the S9.5 stream's words alone: what no diff can go below
        from laya_cases.query.resample import _bit_generator
        gen = np.random.Generator(_bit_generator(0))
        words = args.bootstrap * (1 << args.n.bit_length())       # the expected count, rejections included
        for at in range(0, words, 1 << 20):
            gen.integers(0, 1 << 32, min(1 << 20, words - at), dtype=np.int64)
        return {"s": time.perf_counter() - t, "mb": peak_mb()}
    if args.child == "report":
        from laya_cases.query.sql import connect
        from laya_cases.report import build as R
        R.build(connect(wh, ["a"]), "a", R.Options(include_cases=False))
        return {"s": time.perf_counter() - t, "mb": peak_mb()}
    from laya_cases.report.diff import diff
    doc = diff(wh, "a", "b", by=args.by or None, bootstrap=args.bootstrap)
    return {"s": time.perf_counter() - t, "mb": peak_mb(), "flips": len(doc["flips"]), "ci95": doc["ci95"]}


def run_child(args, step: str, store: Path, by: str = "") -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", step, "--n", str(args.n), "--store", str(store),
                          "--bootstrap", str(args.bootstrap), "--flips", str(args.flips), "--by", by],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[200_000, 1_000_000])
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--flips", type=float, default=0.05)
    ap.add_argument("--by", default="language", help="the dimension of the per-slice row ('' for none)")
    ap.add_argument("--child"), ap.add_argument("--store"), ap.add_argument("--n", type=int)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    for n in args.sizes:
        args.n = n
        store = Path(tempfile.mkdtemp(prefix="lc-diff-bench-"))
        try:
            run_child(args, "write", store)
            base = run_child(args, "report", store)
            floor = run_child(args, "floor", store)
            print("%d decisions a run, B=%d: report A %.2f s, peak %.0f MB; drawing the bootstrap's "
                  "words alone %.2f s" % (n, args.bootstrap, base["s"], base["mb"], floor["s"]), flush=True)
            for by in [""] + ([args.by] if args.by else []):
                r = run_child(args, "diff", store, by)
                print("  diff A B%s: %.2f s (%.1fx the report, %.1fx the words), peak %.0f MB (%.1fx); %d flips, "
                      "ci95 %s" % (" --by " + by if by else "", r["s"], r["s"] / base["s"], r["s"] / floor["s"],
                                   r["mb"], r["mb"] / base["mb"], r["flips"], r["ci95"]), flush=True)
        finally:
            shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
