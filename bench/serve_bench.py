"""How fast `laya-cases serve` answers a cases page on a big synthetic decision run (issue 13: under a
second per page at 10M decisions). Printed, never asserted.

    .venv/bin/python bench/serve_bench.py --rows 1000000            # 1M decisions
    .venv/bin/python bench/serve_bench.py --rows 10000000 --keep /tmp/wh10m

Each page is fetched through Starlette's TestClient (the whole app: checks, DuckDB query, rendering)
a few times; the median and the slowest are printed with the page, and the median's ratio to the
baseline measured in the same run: a fresh DuckDB connection reading 50 rows straight from the run's
Parquet files. --keep reuses a warehouse.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402


def build(root: Path, rows: int) -> None:
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(root)
    if wh.has_run("big"):
        return
    t = time.perf_counter()
    step = 1 << 20
    data = synthetic.decisions(rows, seed=7)
    synthetic.write_run(wh, "big", data, chunk=step)
    print("wrote %d synthetic decisions in %.1f s" % (rows, time.perf_counter() - t))


def bare_read(root: Path, repeat: int) -> list:
    """The baseline: a fresh DuckDB connection reading a page's worth of rows straight from the files."""
    import duckdb

    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        duckdb.connect().execute("SELECT * FROM read_parquet('%s/cases/run_id=big/*.parquet') LIMIT 50" % root).fetchall()
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", type=Path, default=None, help="warehouse directory to create or reuse")
    args = ap.parse_args()
    from starlette.testclient import TestClient

    from laya_cases.views.serve import create_app

    root = args.keep or Path(tempfile.mkdtemp(prefix="serve-bench-")) / "wh"
    build(root, args.rows)
    client = TestClient(create_app(root))
    mid = args.rows // 2
    pages = [
        ("first page, no filter", "/run/big/cases"),
        ("language=de, incorrect", "/run/big/cases?language=de&outcome=incorrect"),
        ("confidence in [0.2, 0.3], tag=vip", "/run/big/cases?min_confidence=0.2&max_confidence=0.3&tag=vip"),
        ("qid=urgency, model=english, 500 rows", "/run/big/cases?qid=urgency&model=english&limit=500"),
        ("keyset page in the middle", "/run/big/cases?after_row=%d&after_qid=intent" % mid),
        ("keyset page near the end", "/run/big/cases?after_row=%d&after_qid=intent" % (args.rows - 30)),
        ("one case", "/run/big/case?row=%d&qid=%s" % (mid, "intent")),
        ("sorted by confidence, descending", "/run/big/cases?sort=confidence&dir=desc"),
        ("sorted, offset page in the middle", "/run/big/cases?sort=confidence&offset=%d" % mid),
        ("searched (q=refund)", "/run/big/cases?q=refund"),
        ("searched and sorted, as CSV", "/run/big/cases?q=refund&sort=predicted&format=csv"),
    ]
    t = time.perf_counter()
    assert client.get("/run/big").status_code == 200           # builds the run's report (cached after)
    print("run page, first visit (report built): %.3f s" % (time.perf_counter() - t))
    import re

    t = time.perf_counter()
    images = re.findall(r'<img class="chart" src="([^"]+)"', client.get("/run/big").text)
    assert images and all(client.get(src).status_code == 200 for src in images)
    print("its %d charts, drawn (the browser asks after the page): %.3f s" % (len(images), time.perf_counter() - t))
    t = time.perf_counter()
    assert client.get(pages[0][1]).status_code == 200          # opens the run's connection (cached after)
    print("first cases request (connection, footers): %.3f s" % (time.perf_counter() - t))
    pages = [("run page, report cached", "/run/big"),
             ("run page, slices sorted by ece", "/run/big?sort=ece&dir=desc")] + pages
    base = statistics.median(bare_read(root, args.repeat))
    print("baseline: DuckDB reading 50 rows of the run's Parquet files: %.3f s" % base)
    print("%-40s %10s %10s %10s" % ("page (%d decisions)" % args.rows, "median s", "max s", "x base"))
    for name, url in pages:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            r = client.get(url)
            times.append(time.perf_counter() - t)
        status = "" if r.status_code == 200 else "  (HTTP %d)" % r.status_code
        print("%-40s %10.3f %10.3f %10.1f%s" % (name, statistics.median(times), max(times),
                                                statistics.median(times) / base, status))


if __name__ == "__main__":
    main()
