"""Time `report` on DuckDB and on Spark over the same synthetic run (docs/scale.md), and check they agree.

    .venv/bin/python bench/engine_bench.py [--n 1000000] [--distinct] [--master local[2]] [--repeat 3]
        [--skip-spark] [--root DIR]

Writes n synthetic decisions (bench/synthetic.py) into a temporary warehouse, then times the metrics
report (report.build without the cases listing, the part an engine computes) with DuckDB `--repeat`
times (best and median seconds) and with Spark once after one warm-up report (the JVM start and the
first query's planning are printed separately), and says whether the two JSON documents are equal
text. Also the A/B of the seam: the same DuckDB report with laya_cases.query.sql's engine dispatch
bypassed. Peak RSS of this process (VmHWM) is printed; the Spark JVM's memory is not included.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic as S  # noqa: E402

from laya_cases.report import build as R  # noqa: E402
from laya_cases.query import sql as Q  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402
from laya_cases.query.sql import connect


def peak_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(fn, repeat):
    out, times = None, []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--distinct", action="store_true")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--root")
    a = ap.parse_args()
    root = Path(a.root or tempfile.mkdtemp(prefix="engine-bench-"))
    wh = Warehouse(root / "wh")
    options = R.Options(include_cases=False)
    try:
        start = time.perf_counter()
        S.write_run(wh, "syn", S.decisions(a.n, seed=1, distinct=a.distinct))
        print("write %d decisions: %.2fs (%.0f decisions/s)" % (a.n, time.perf_counter() - start,
                                                                  a.n / (time.perf_counter() - start)))
        duck, times = timed(lambda: R.dumps(R.build(connect(wh, ["syn"]), "syn", options)), a.repeat)
        print("duckdb report: best %.3fs median %.3fs" % (min(times), statistics.median(times)))
        seam = (Q.query, Q.materialize)
        Q.query = lambda con, name, params=None: con.execute(Q.text(name), Q._bind(name, params))
        Q.materialize = lambda con, name, table, params=None: con.execute(
            "CREATE OR REPLACE TEMP TABLE %s AS %s" % (Q.quote_ident(table), Q.text(name)), Q._bind(name, params))
        _, bypass = timed(lambda: R.dumps(R.build(connect(wh, ["syn"]), "syn", options)), a.repeat)
        Q.query, Q.materialize = seam
        print("duckdb report, seam bypassed: best %.3fs median %.3fs" % (min(bypass), statistics.median(bypass)))
        print("peak RSS (this process): %.0f MB" % peak_mb())
        if a.skip_spark:
            return
        from laya_cases.query.engines.spark import SparkConnection, session

        start = time.perf_counter()
        spark = session(a.master)
        print("spark session (%s): %.2fs" % (a.master, time.perf_counter() - start))
        run = lambda: R.dumps(R.build(SparkConnection(spark, wh, ["syn"]), "syn", options))  # noqa: E731
        _, first = timed(run, 1)
        other, times = timed(run, 1)
        print("spark report: first %.2fs, second %.2fs; equal to duckdb: %s"
              % (first[0], times[0], other == duck))
    finally:
        if not a.root:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
