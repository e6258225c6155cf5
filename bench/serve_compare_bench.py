"""How fast `laya-cases serve` answers the compare pages on big synthetic runs (issue 30: first byte of
/compare on 1M-decision runs; issue 32 item 4). Printed, never asserted. The two-run diff page
(/compare?a=&b=) of runs this big comes first without its bootstrap interval, drawn meanwhile on a thread:
the cold section also prints when the whole diff is in.

    .venv/bin/python bench/serve_compare_bench.py --rows 1000000 --keep /tmp/whcmp

Three runs of one synthetic dataset (bench/synthetic.py; runs b and c flip the correctness and move
the confidence of 5% and 10% of the decisions of a; a wrong answer is "b" or "c" by question), and d,
a's twin but for its last 100 rows: the case grid's worst walk (a filter that matches only at the end).
Each page is fetched through Starlette's TestClient (the whole app): first in one app, in the order
listed (so a page finds the caches the pages above it filled, as a person clicking through does), then
the compare pages again each from a fresh app. The run page of `a` (the full report, built once per
run) is timed in the same process as the baseline. --keep reuses a warehouse.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

RUNS = ("a", "b", "c")


def build(root: Path, rows: int) -> None:
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(root)
    base = synthetic.decisions(rows, seed=7)
    rng = np.random.default_rng(11)
    for run_id, share in zip(RUNS, (0.0, 0.05, 0.10)):
        if wh.has_run(run_id):
            continue
        t = time.perf_counter()
        d = dict(base)
        if share:
            moved = rng.random(rows) < share
            d["correct"] = np.where(moved, ~base["correct"], base["correct"])
            d["conf"] = np.where(moved, np.round(1 - base["conf"], 4), base["conf"])
        d["predicted"] = np.where(d["q"] == 2, None, np.where(d["correct"], "a", np.where(d["q"] == 0, "b", "c")))
        synthetic.write_run(wh, run_id, d)
        print("wrote run %s: %d synthetic decisions in %.1f s" % (run_id, rows, time.perf_counter() - t))
    if not wh.has_run("d"):              # a's twin but for its last 100 rows: a filter's worst walk
        d = dict(base)
        d["correct"] = np.where(np.arange(rows) >= rows - 100, ~base["correct"], base["correct"])
        d["predicted"] = np.where(d["q"] == 2, None, np.where(d["correct"], "a", np.where(d["q"] == 0, "b", "c")))
        synthetic.write_run(wh, "d", d)


def first_byte(client, url: str) -> float:
    t = time.perf_counter()
    with client.stream("GET", url) as r:
        next(r.iter_bytes())
        status = r.status_code
    elapsed = time.perf_counter() - t
    if status != 200:
        raise SystemExit("%s answered HTTP %d" % (url, status))
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="warehouse directory to create or reuse")
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="serve-compare-bench-")) / "wh"
    build(root, args.rows)
    if args.build_only:
        return
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app

    mid = args.rows // 2
    pages = [
        ("run page of a (baseline)", "/run/a"),
        ("runs list", "/"),
        ("run page of a, slices sorted by ece", "/run/a?sort=ece&dir=desc"),
        ("run page of a as csv", "/run/a?format=csv"),
        ("a chart of the run page (after it)", "/run/a/chart/confidence-language.svg"),
        ("cases of b, searched and sorted", "/run/b/cases?q=refund&sort=confidence&dir=desc"),
        ("one case of c", "/run/c/case?row=%d&qid=intent" % mid),
        ("one case side by side in a, b, c", "/case?runs=a,b,c&row=%d&qid=intent" % mid),
        ("diff of a, b (first view: no interval)", "/compare?a=a&b=b"),
        ("compare 2 runs", "/compare?runs=a,b"),
        ("compare 2 runs by language", "/compare?runs=a,b&by=language"),
        ("compare 3 runs", "/compare?runs=a,b,c"),
        ("compare 3 runs by language", "/compare?runs=a,b,c&by=language"),
        ("case grid, 3 runs, first page", "/compare/cases?runs=a,b,c"),
        ("case grid, outcome differs", "/compare/cases?runs=a,b,c&show=outcome_differs"),
        ("case grid, prediction differs", "/compare/cases?runs=a,b,c&show=prediction_differs"),
        ("case grid, all wrong", "/compare/cases?runs=a,b,c&show=all_wrong"),
        ("case grid, keyset page in the middle", "/compare/cases?runs=a,b,c&after_row=%d&after_qid=intent" % mid),
        ("case grid a,d: outcome differs (end only)", "/compare/cases?runs=a,d&show=outcome_differs"),
        ("case grid, csv of one page", "/compare/cases?runs=a,b,c&show=outcome_differs&format=csv"),
        ("compare 3 runs: risk-coverage chart (after it)", "/compare/chart/risk_coverage.svg?runs=a,b,c"),
    ]
    print("%-40s %10s %10s %10s" % ("page (%d decisions a run)" % args.rows, "first s", "median s", "max s"))
    client = TestClient(create_app(root))        # one app: each page's first fetch finds the caches the
    for name, url in pages:                      # pages above it filled, as a person clicking through does
        times = [first_byte(client, url) for _ in range(args.repeat)]
        print("%-40s %10.3f %10.3f %10.3f" % (name, times[0], statistics.median(times[1:] or times), max(times)))
    print("cold (a fresh app per page, first byte):")
    for name, url in [p for p in pages if p[1].startswith("/compare?")]:
        client = TestClient(create_app(root))
        t = time.perf_counter()
        print("%-40s %10.3f" % (name, first_byte(client, url)))
        if "a=" in url:                          # the diff's page: its interval is drawn on a thread meanwhile
            client.get(url + "&format=json")
            print("%-40s %10.3f" % ("  ... the whole diff (with its interval)", time.perf_counter() - t))


if __name__ == "__main__":
    main()
