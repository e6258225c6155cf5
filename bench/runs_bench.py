"""`laya-cases runs` over a store of many small runs (issue 30: 1,000 runs within 1 s).

    nice .venv/bin/python bench/runs_bench.py [--runs-in-store 1000] [--rows 20] [--repeat 5] [-w DIR]

Builds a store of N small committed runs (bench/synthetic.py) under a temporary directory, or reuses
`-w DIR` (built there when it holds no runs yet), then times, alternating with the baseline:

- baseline: `python -c "import laya_cases, duckdb; duckdb.connect()"` (a fresh process);
- `laya-cases runs` as a subprocess, cold (an empty check cache: $LAYA_CASES_CHECK_CACHE points at a fresh
  directory each time) and warm (the cache the previous run left);
- the listing in-process (connect + runs.sql, as the CLI: `listing.runs(connect_all(wh, runs_only=True))`), cold and warm,
  after clearing the per-process caches.

Prints the median of each, the ratio to the baseline and the load average: this machine is shared, so
compare numbers of one run, not numbers of different runs.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_store(path: Path, n_runs: int, rows: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic as S
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(path)
    have = set(wh.run_ids())
    d = S.decisions(rows)
    for i in range(n_runs):
        rid = "bench-%04d" % i
        if rid not in have:
            S.write_run(wh, rid, d)


def timed(argv, env) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def in_process(store: Path, cache: Path) -> float:
    """One listing in this process, as the CLI does it, after clearing the per-process caches."""
    from laya_cases.query import listing
    from laya_cases.query.sql import connect
    from laya_cases.store import check
    from laya_cases.store.warehouse import Warehouse

    os.environ["LAYA_CASES_CHECK_CACHE"] = str(cache)
    check._FOOTERS.clear()
    check._COUNTS.clear()
    start = time.perf_counter()
    con = connect(Warehouse(store), functions=False, runs_only=True)
    _, rows = listing.runs(con)
    took = time.perf_counter() - start
    con.close()
    assert rows, "no runs listed"
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-in-store", type=int, default=1000, help="committed runs in the store")
    parser.add_argument("--rows", type=int, default=20, help="decisions per run")
    parser.add_argument("--repeat", type=int, default=5, help="times of each measurement (median)")
    parser.add_argument("-w", "--warehouse", help="build (or reuse) the store here instead of a temporary one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="laya-runs-bench-") as tmp:
        store = Path(args.warehouse) if args.warehouse else Path(tmp) / "wh"
        start = time.perf_counter()
        build_store(store, args.runs_in_store, args.rows)
        print("store            %s: %d runs of %d rows (ready in %.1f s)"
              % (store, args.runs_in_store, args.rows, time.perf_counter() - start))
        warm_cache, cold_cache = Path(tmp) / "cache-warm", Path(tmp) / "cache-cold"
        env_warm = dict(os.environ, LAYA_CASES_CHECK_CACHE=str(warm_cache))
        baseline = [sys.executable, "-c", "import laya_cases, duckdb; duckdb.connect()"]
        command = [sys.executable, "-m", "laya_cases_cli", "runs", "-w", str(store)]
        timed(baseline, env_warm), timed(command, env_warm)           # the file cache, the check cache
        samples = {"baseline (import + connect)": [], "runs, subprocess, cold": [], "runs, subprocess, warm": [],
                   "runs, in-process, cold": [], "runs, in-process, warm": []}
        for _ in range(args.repeat):                                 # alternate, so load changes hit all alike
            samples["baseline (import + connect)"].append(timed(baseline, env_warm))
            shutil.rmtree(cold_cache, ignore_errors=True)
            samples["runs, subprocess, cold"].append(timed(command, dict(os.environ, LAYA_CASES_CHECK_CACHE=str(cold_cache))))
            samples["runs, subprocess, warm"].append(timed(command, env_warm))
            shutil.rmtree(cold_cache, ignore_errors=True)
            samples["runs, in-process, cold"].append(in_process(store, cold_cache))
            samples["runs, in-process, warm"].append(in_process(store, warm_cache))
        base = statistics.median(samples["baseline (import + connect)"])
        for name, values in samples.items():
            med = statistics.median(values)
            print("%-28s %.3f s  (%.2fx the baseline; median of %d)" % (name, med, med / base, len(values)))
        print("load average     %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
