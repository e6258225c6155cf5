"""`laya-cases sql` on a big store: the table's first screen (issue 8: under a second on 10M rows).

    nice .venv/bin/python bench/sql_bench.py [--rows 10000000] [--warehouse DIR] [--runs 3]

Builds a store of N synthetic decisions (bench/synthetic.py) in --warehouse (default
<tmp>/laya-sql-bench-<N>, kept and reused: building 10M rows takes about two minutes), then times each
query below as a user runs it (`laya-cases sql QUERY --max-rows 40`, a fresh process, median of --runs)
next to `python -c "import duckdb"`, and prints what the table's last line said (the count of the rest,
or that it was not counted). The table reads its rows with the LIMIT planned into the query; the rest is
counted only when DuckDB's plan for the count streams, or reads at most laya_cases.query.listing.COUNT_ROWS rows
(docs/sql.md section 8). Prints the load average: compare numbers of one run, not of different runs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "SELECT * FROM cases",                                          # scan: LIMIT pushdown, count from statistics
    "SELECT * FROM cases WHERE confidence > 0.99",                  # filter: counted by one pass over two columns
    "SELECT qid, confidence FROM cases ORDER BY confidence",        # sort: a top-N for the screen, not counted
]


def build(path: Path, rows: int) -> float:
    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic as S
    from laya_cases.store.warehouse import Warehouse

    start = time.perf_counter()
    S.write_run(Warehouse(path), "bench", S.decisions(rows))
    return time.perf_counter() - start


def timed(argv) -> tuple:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(argv[-4:]), proc.stderr.strip()))
    lines = proc.stdout.rstrip("\n").splitlines()
    return time.perf_counter() - start, (lines[-1] if lines else "")[:60]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--warehouse", help="store to use (built here when it has no runs)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (median)")
    args = parser.parse_args()
    store = Path(args.warehouse or Path(tempfile.gettempdir()) / ("laya-sql-bench-%d" % args.rows))
    if not (store / "runs").is_dir():
        print("built %d decisions in %s in %.1f s" % (args.rows, store, build(store, args.rows)))
    baseline = statistics.median(timed([sys.executable, "-c", "import duckdb"])[0] for _ in range(args.runs))
    print("%-56s %7.3f s" % ("python -c 'import duckdb'", baseline))
    for query in QUERIES:
        argv = [sys.executable, "-m", "laya_cases_cli", "sql", query, "-w", str(store), "--max-rows", "40"]
        samples = [timed(argv) for _ in range(args.runs)]
        wall = statistics.median(s[0] for s in samples)
        print("%-56s %7.3f s  (%.2fx import duckdb)  %s" % (query, wall, wall / baseline, samples[-1][1]))
    print("load average %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
