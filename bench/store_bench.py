"""A store of many big runs (issue 30): does a run's report cost what it costs alone, and how fast is a
question over every run?

    nice .venv/bin/python bench/store_bench.py [--runs 10] [--rows 10000000] [--keep DIR] [--repeat 3]

Builds (or reuses, with --keep) two stores of synthetic decisions (bench/synthetic.py, rounded
confidences): `alone/` holds run r0 only, `many/` holds r0 .. r{runs-1} (r0 written with the same seed, so
the two r0 are the same rows). Then times, each a fresh `laya-cases` process as a user runs it, median of
--repeat, alternating between the two stores:

- `report r0 --no-cases --json FILE` in `alone/` (the baseline) and in `many/`: the ratio says whether
  partition pruning holds (the issue's bound: within 1.2x); the two JSON files must be equal;
- `laya-cases sql` of the accuracy per run and language over every decision of `many/` (the bound: 15 s);
- `laya-cases runs` on `many/`.

Prints the load average: the machine is shared, compare the numbers of one run.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = ("SELECT run_id, language_key, count(*) AS n, avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) AS accuracy "
            "FROM cases WHERE correct IS NOT NULL GROUP BY ALL ORDER BY ALL")


def build(root: Path, runs: int, rows: int) -> None:
    from laya_cases.store.warehouse import Warehouse

    for store, ids in (("alone", [0]), ("many", range(runs))):
        wh = Warehouse(root / store)
        for i in ids:
            if not wh.has_run("r%d" % i):
                t = time.perf_counter()
                synthetic.write_run(wh, "r%d" % i, synthetic.decisions(rows, seed=100 + i), chunk=1 << 20)
                print("wrote %s/r%d (%d decisions) in %.1f s" % (store, i, rows, time.perf_counter() - t), flush=True)


def timed(args, out: Path = None) -> float:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "laya_cases_cli", *args], capture_output=True, text=True,
                          cwd=str(ROOT))
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit("laya-cases %s failed: %s" % (" ".join(args), proc.stderr.strip()[-500:]))
    if out is not None:
        out.write_text(proc.stdout, encoding="utf-8")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="folder of the two stores, created or reused")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="laya-store-bench-"))
    build(root, args.runs, args.rows)
    alone, many = str(root / "alone"), str(root / "many")
    reports = {"alone": [], "many": []}
    for i in range(args.repeat):
        for name, wh in (("alone", alone), ("many", many)):
            out = root / ("report-%s.json" % name)
            reports[name].append(timed(["report", "r0", "-w", wh, "--no-cases", "--json", str(out)]))
    same = filecmp.cmp(str(root / "report-alone.json"), str(root / "report-many.json"), shallow=False)
    base = statistics.median(reports["alone"])
    total = args.runs * args.rows
    print("stores: alone/ 1 run, many/ %d runs, %d decisions a run (%d in all); load average %s"
          % (args.runs, args.rows, total, " ".join("%.2f" % x for x in os.getloadavg())))
    print("%-52s %8.2f s  (1.00x, the baseline)" % ("report r0, a store of its own", base))
    many_s = statistics.median(reports["many"])
    print("%-52s %8.2f s  (%.2fx the baseline; JSON %s)" % ("report r0, in the store of %d runs" % args.runs, many_s,
                                                            many_s / base, "equal" if same else "DIFFERS"))
    sql = [timed(["sql", ACCURACY, "-w", many, "--format", "csv"]) for _ in range(args.repeat)]
    print("%-52s %8.2f s" % ("sql: accuracy per run and language, %d decisions" % total, statistics.median(sql)))
    runs = [timed(["runs", "-w", many]) for _ in range(args.repeat)]
    print("%-52s %8.2f s  (first: %.2f s)" % ("runs, the store of %d runs" % args.runs, statistics.median(runs), runs[0]))


if __name__ == "__main__":
    main()
