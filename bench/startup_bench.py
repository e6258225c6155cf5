"""Start-up of `laya-cases runs` against `python -c "import duckdb"` (issue 8: within 0.3 s).

    nice .venv/bin/python bench/startup_bench.py [--runs 15] [--rows 1000]

Builds a small store under a temporary directory (bench/synthetic.py), then alternates the two commands
N times and prints the median wall time and the median CPU time (user + system, of the child) of each,
their difference and their ratio, and the load average: this machine is shared, so compare the two
numbers of one run, not numbers of different runs. tests/cli/test_startup.py checks the structural side
(no pyarrow, numpy, torch, transformers, matplotlib or polars on the `runs` path).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv) -> tuple:
    """(wall seconds, child CPU seconds) of one run of argv."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_store(path: Path, rows: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic as S
    from laya_cases.store.warehouse import Warehouse

    S.write_run(Warehouse(path), "bench", S.decisions(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (median)")
    parser.add_argument("--rows", type=int, default=1000, help="decisions in the small store")
    parser.add_argument("-w", "--warehouse", help="use this store instead of building one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="laya-startup-") as tmp:
        store = Path(args.warehouse) if args.warehouse else Path(tmp) / "wh"
        if not args.warehouse:
            build_store(store, args.rows)
        baseline = [sys.executable, "-c", "import duckdb"]
        command = [sys.executable, "-m", "laya_cases_cli", "runs", "-w", str(store)]
        timed(baseline), timed(command)                      # warm the file cache
        samples = {"import duckdb": [], "laya-cases runs": []}
        for _ in range(args.runs):                           # alternate, so load changes hit both alike
            samples["import duckdb"].append(timed(baseline))
            samples["laya-cases runs"].append(timed(command))
    med = {name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
           for name, runs in samples.items()}
    for name, (wall, cpu) in med.items():
        print("%-16s wall %.3f s  cpu %.3f s  (median of %d)" % (name, wall, cpu, args.runs))
    (w0, c0), (w1, c1) = med["import duckdb"], med["laya-cases runs"]
    print("difference       wall %+.3f s  cpu %+.3f s  (target: wall <= +0.300 s)" % (w1 - w0, c1 - c0))
    print("ratio            wall %.2fx    cpu %.2fx" % (w1 / w0, c1 / c0))
    print("load average     %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
