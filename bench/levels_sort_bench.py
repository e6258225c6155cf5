"""What `levels` would cost as one global sort plus linear scans, against sql/pipeline/levels.sql today.

    .venv/bin/python bench/levels_sort_bench.py [--n 1000000] [--rounded] [--root DIR]

Issue 8 asks for the full report at 10M full-precision confidences in <= 4 s; `levels` (with
`slice_cells`, its input) is most of that report's time, and a SQL window sorts every (group, level)
pair on its own. This measures the alternative the issue names before anyone builds it: the paired cells
sorted once by confidence (S3.12 order: +inf first, NaN last as one level), then per dimension a stable
counting pass by group and a running sum, in numpy. It is a measurement, not a second definition: the
script checks that both give the same rows (group, level, confidence, rows, hits, accepted, cum_hits,
N) and prints the seconds of each, from the same materialised `cells` and `slice_map` tables.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic as S  # noqa: E402

from laya_cases import sql as Q  # noqa: E402
from laya_cases.warehouse import Warehouse  # noqa: E402

COLUMNS = ["dim", "key", "level", "conf", "rows", "hits", "accepted", "cum_hits", "N"]


def numpy_levels(con) -> dict:
    """levels.sql's rows from `cells` and `slice_map`: one sort of the paired cells, then per dimension a
    stable pass by group (np.argsort of small integers: a radix sort) and running sums. A case is in a tag
    group once per occurrence of the tag, as slice_map says (S4.1)."""
    cells = con.execute("SELECT c.slice_set, c.conf, c.n, s.correct FROM cells c "
                        "JOIN (SELECT DISTINCT slice_set, correct FROM slice_map) s USING (slice_set) "
                        "WHERE c.conf IS NOT NULL AND s.correct IS NOT NULL").fetchnumpy()
    memberships = con.execute("SELECT slice_set, dim, key FROM slice_map ORDER BY slice_set, dim, key").fetchall()
    order = np.argsort(-cells["conf"], kind="stable")            # -conf ascending, NaN last (S3.12)
    sset, conf = cells["slice_set"][order], cells["conf"][order]
    n, hit = cells["n"][order].astype(np.int64), cells["correct"][order].astype(np.int64)
    names = sorted({(d, k) for _, d, k in memberships})
    gid = {g: i for i, g in enumerate(names)}
    size = max([s for s, _, _ in memberships] + [int(sset.max(initial=0))]) + 1
    out = {c: [] for c in COLUMNS if c != "key"}
    for dim in sorted({d for _, d, _ in memberships}):
        mine = [(s, gid[(d, k)]) for s, d, k in memberships if d == dim]
        count = np.bincount([s for s, _ in mine], minlength=size)
        start = np.concatenate(([0], np.cumsum(count)[:-1]))
        flat = np.array([g for _, g in mine], dtype=np.int64)
        copies = count[sset]                                     # rows repeated once per membership,
        row = np.repeat(np.arange(len(sset)), copies)            # in confidence order still
        k = np.arange(len(row)) - np.repeat(np.cumsum(copies) - copies, copies)
        g = flat[start[sset[row]] + k]
        by = np.argsort(g.astype(np.int16 if len(names) < 32768 else np.int32), kind="stable")
        g, c, rows = g[by], conf[row][by], n[row][by]
        hits = rows * hit[row][by]
        same = (g[1:] == g[:-1]) & ((c[1:] == c[:-1]) | (np.isnan(c[1:]) & np.isnan(c[:-1])))
        begin = np.flatnonzero(np.concatenate(([True], ~same))) if len(g) else np.zeros(0, np.int64)
        lg, lc = g[begin], c[begin]
        lrows = np.add.reduceat(rows, begin) if len(g) else rows
        lhits = np.add.reduceat(hits, begin) if len(g) else hits
        first = np.flatnonzero(np.concatenate(([True], lg[1:] != lg[:-1]))) if len(lg) else begin
        run_rows, run_hits = np.cumsum(lrows), np.cumsum(lhits)
        span = np.diff(np.concatenate((first, [len(lg)])))
        out["level"].append(np.arange(len(lg)) - np.repeat(first, span) + 1)
        out["conf"].append(lc)
        out["rows"].append(lrows)
        out["hits"].append(lhits)
        out["accepted"].append(run_rows - np.repeat(run_rows[first] - lrows[first], span))
        out["cum_hits"].append(run_hits - np.repeat(run_hits[first] - lhits[first], span))
        out["N"].append(np.repeat(np.add.reduceat(lrows, first) if len(lg) else lrows, span))
        out["dim"].append(lg)
    result = {c: np.concatenate(v) for c, v in out.items()}
    present = np.unique(result["dim"])                           # groups with paired cases, numbered as SQL
    result["dim"] = np.searchsorted(present, result["dim"])
    result["names"] = [names[i] for i in present]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounded", action="store_true", help="confidences rounded to 4 decimals (default: distinct)")
    ap.add_argument("--root", help="an existing warehouse (with --run); default: a new temporary one")
    ap.add_argument("--run", default="bench", help="the run of --root to read")
    args = ap.parse_args()
    tmp = None if args.root else Path(tempfile.mkdtemp(prefix="lc-levels-"))
    root = Path(args.root) if args.root else tmp
    try:
        wh = Warehouse(root)
        if tmp is not None:
            S.write_run(wh, args.run, S.decisions(args.n, distinct=not args.rounded))
        con = wh.connect([args.run])
        for name in ("cells", "slice_map"):
            Q.materialize(con, "pipeline/%s.sql" % name, name, {"run_id": args.run})
        t = time.perf_counter()
        Q.materialize(con, "pipeline/slice_cells.sql", "slice_cells")
        Q.materialize(con, "pipeline/levels.sql", "levels")
        sql_s = time.perf_counter() - t
        t = time.perf_counter()
        ours = numpy_levels(con)
        numpy_s = time.perf_counter() - t
        theirs = con.execute("SELECT dense_rank() OVER (ORDER BY dim, key) - 1 AS dim, level, conf, rows, hits, "
                             "accepted, cum_hits, N FROM levels ORDER BY dim, key, level").fetchnumpy()
        order = np.lexsort((ours["level"], ours["dim"]))
        same = len(order) == len(theirs["level"]) and all(
            np.array_equal(ours[c][order], np.asarray(theirs[c], dtype=ours[c].dtype), equal_nan=c == "conf")
            for c in ("dim", "level", "conf", "rows", "hits", "accepted", "cum_hits", "N"))
        same = same and ours["names"] == [tuple(r) for r in con.execute(
            "SELECT DISTINCT dim, key FROM levels ORDER BY dim, key").fetchall()]
        print("%s (%s): %d level rows; SQL slice_cells + levels %.2f s; one sort + scans (numpy) "
              "%.2f s (%.1fx); same rows: %s" % (args.root or "%d decisions" % args.n,
                                                   "rounded" if args.rounded else "distinct", len(order),
                                                   sql_s, numpy_s, sql_s / numpy_s, same))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
