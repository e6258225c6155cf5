"""Peak RSS of `report` (text report, no cases) at given sizes, bootstrap replicates and memory limits.

Each configuration runs in its own subprocess, so the peak printed (VmHWM from /proc/self/status) is
that configuration's alone. With --bootstrap the child also notes its current RSS (VmRSS) after every
replicate batch, so a memory that grows with B shows as a rising "rss per batch" column. Prints
seconds and MB measured in the same run, with the load average; asserts nothing.

    .venv/bin/python bench/memory_bench.py --store /tmp/prof/r1m [--run bench] [--bootstrap 0 100]
        [--memory-limit default 50%] [--batch-draws 1048576]
    .venv/bin/python bench/memory_bench.py --rounded 1000000 [--distinct 1000000]   # synthetic stores, in /tmp

`--memory-limit default` leaves $LAYA_CASES_MEMORY_LIMIT unset (laya_cases/query/sql.py's default); any other
value is exported as $LAYA_CASES_MEMORY_LIMIT for that child. `--batch-draws` sets
laya_cases.query.resample.BATCH_DRAWS for that child (0: the module's own value).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from laya_cases.query.sql import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))


def status_mb(key: str) -> float:
    """VmHWM (peak) or VmRSS (now) of this process, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def child(args) -> dict:
    from laya_cases.report import build as R
    from laya_cases.query import resample
    from laya_cases.store.warehouse import Warehouse

    if args.batch_draws:
        resample.BATCH_DRAWS = args.batch_draws
    rss = []
    start = time.perf_counter()
    options = R.Options(include_cases=False, bootstrap=args.bootstrap,
                        progress=lambda done, total: rss.append((done, status_mb("VmRSS"),
                                                                 time.perf_counter() - start)))
    con = connect(Warehouse(args.store), [args.run])
    limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    doc = R.build(con, args.run, options)
    seconds = time.perf_counter() - start
    return {"s": seconds, "mb": status_mb("VmHWM"), "limit": limit, "rss": rss,
            "n": doc["extensions"]["run"]["n_cases"]}


def run_child(store: str, run: str, bootstrap: int, limit: str, batch_draws: int) -> dict:
    env = dict(os.environ)
    env.pop("LAYA_CASES_MEMORY_LIMIT", None)
    if limit != "default":
        env["LAYA_CASES_MEMORY_LIMIT"] = limit
    out = subprocess.run([sys.executable, __file__, "--child", "--store", store, "--run", run,
                          "--bootstrap", str(bootstrap), "--batch-draws", str(batch_draws)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_store(n: int, distinct: bool, parent: Path) -> str:
    import synthetic as S
    from laya_cases.store.warehouse import Warehouse

    path = parent / ("%s_%d" % ("distinct" if distinct else "rounded", n))
    S.write_run(Warehouse(str(path)), "bench", S.decisions(n, distinct=distinct))
    return str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", action="append", default=[], help="a warehouse holding the run (repeatable)")
    ap.add_argument("--run", default="bench")
    ap.add_argument("--rounded", type=int, nargs="*", default=[], help="write synthetic rounded runs of these sizes")
    ap.add_argument("--distinct", type=int, nargs="*", default=[], help="... and full-precision ones")
    ap.add_argument("--bootstrap", type=int, nargs="*", default=[0])
    ap.add_argument("--memory-limit", nargs="*", default=["default"])
    ap.add_argument("--batch-draws", type=int, nargs="*", default=[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.store, args.bootstrap, args.batch_draws = args.store[0], args.bootstrap[0], args.batch_draws[0]
        print(json.dumps(child(args)))
        return
    tmp = Path(tempfile.mkdtemp(prefix="memory_bench_")) if args.rounded or args.distinct else None
    try:
        stores = list(args.store)
        for n, distinct in [(n, False) for n in args.rounded] + [(n, True) for n in args.distinct]:
            stores.append(write_store(n, distinct, tmp))
        print("load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
        for store, b, limit, draws in itertools.product(stores, args.bootstrap, args.memory_limit, args.batch_draws):
            r = run_child(store, args.run, b, limit, draws)
            batches = r["rss"]
            trace = ""
            if batches:
                picks = sorted({round(i * (len(batches) - 1) / 5) for i in range(6)})
                trace = "; rss per batch (replicates done: MB) " + ", ".join(
                    "%d: %.0f" % (batches[i][0], batches[i][1]) for i in picks)
            print("%s n=%d B=%d limit=%s (%s) batch_draws=%s: %.1f s, peak %.0f MB%s [load %.2f]"
                  % (Path(store).name, r["n"], b, limit, r["limit"], draws or "default", r["s"], r["mb"], trace,
                     os.getloadavg()[0]), flush=True)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
