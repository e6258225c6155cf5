"""What `levels` would cost as one global sort plus linear scans, against sql/pipeline/levels.sql today.

    .venv/bin/python bench/levels_sort_bench.py [--n 1000000] [--rounded] [--root DIR]
        [--plans numpy polars over] [--no-check]

Issue 8 asks for the full report at 10M full-precision confidences in <= 4 s; `levels` (with
`level_cells`, its input) is most of that report's time, and a SQL window sorts every (group, level)
pair on its own. This measures the alternative the issue names before anyone builds it: the paired cells
sorted once by confidence (S3.12 order: +inf first, NaN last as one level), then per dimension a stable
counting pass by group and a running sum, in numpy; and the same plan in polars (a query language the
project allows beside SQL), whose sorts and joins use every core. It is a measurement, not a second
definition: the script checks that each gives the same rows as the SQL (group, level, confidence, rows,
hits, accepted, cum_hits, N) and prints the seconds of each, from the same materialised `cells` and
`slice_map` tables (the polars and numpy times include reading them out of DuckDB). A third plan,
`over`, is polars without the sort by group: one dimension at a time, each group's running sums taken by
a window (`over("gid")`) that keeps the rows in confidence order. Each line also prints the floor
(DuckDB's bare sort of `level_cells`, as `report_bench.py --floors`) and the process's peak RSS;
`--no-check` runs the plans first, before the SQL, so that the peak is theirs, and compares no rows.
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
from report_bench import peak_mb  # noqa: E402

from laya_cases.query import sql as Q  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402
from laya_cases.query.sql import connect

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


def polars_inputs(con):
    """The paired cells (slice_set, conf, n, correct), the (dim, key) names in SQL's order, and each slice
    set's groups (slice_set, dim, gid numbering those names), as polars frames."""
    import polars as pl

    cells = pl.from_arrow(con.sql(
        "SELECT c.slice_set, c.conf, c.n, s.correct FROM cells c "
        "JOIN (SELECT DISTINCT slice_set, correct FROM slice_map) s USING (slice_set) "
        "WHERE c.conf IS NOT NULL AND s.correct IS NOT NULL").to_arrow_table())
    names = [tuple(r) for r in con.execute("SELECT DISTINCT dim, key FROM slice_map ORDER BY dim, key").fetchall()]
    groups = pl.from_arrow(con.sql(
        "SELECT slice_set, dim, CAST(dense_rank() OVER (ORDER BY dim, key) - 1 AS INTEGER) AS gid "
        "FROM slice_map").to_arrow_table())
    return cells, names, groups


def numbered_as_sql(levels, names: list) -> dict:
    """A polars plan's level rows as numpy columns, their groups renumbered as the SQL numbers them: only the
    groups with paired cases, in (dim, key) order (a bincount, not a sort of every row)."""
    result = {c: levels[c].to_numpy() for c in ("level", "conf", "rows", "hits", "accepted", "cum_hits", "N")}
    gids = levels["gid"].to_numpy()
    present = np.flatnonzero(np.bincount(gids, minlength=len(names)))
    renumber = np.zeros(len(names), dtype=np.int64)
    renumber[present] = np.arange(len(present))
    result["dim"] = renumber[gids]
    result["names"] = [names[i] for i in present]
    return result


def polars_levels(con) -> dict:
    """levels.sql's rows from `cells` and `slice_map` in polars: the paired cells sorted once by confidence
    (S3.12 order: NaN as a null, last), joined to their groups keeping that order, stably sorted by group
    (so each group's rows stay in confidence order), then linear scans: running sums less the group's
    start, the last row of each run of equal confidences as the level, its rows and hits as differences."""
    import polars as pl

    cells, names, groups = polars_inputs(con)
    gid, order = pl.col("gid"), pl.col("order")
    new_group = gid.ne_missing(gid.shift(1))

    def since_group_start(value: pl.Expr) -> pl.Expr:
        return value - pl.when(new_group).then(value).forward_fill()

    rows = (cells.with_columns(order=pl.col("conf").fill_nan(None))
            .sort("order", descending=True, nulls_last=True)
            .join(groups.select("slice_set", "gid"), on="slice_set", how="inner", maintain_order="left")
            .select("gid", "conf", "order", rows=pl.col("n"), hits=pl.col("n") * pl.col("correct").cast(pl.Int64))
            .sort("gid", maintain_order=True))
    last = gid.ne_missing(gid.shift(-1)) | order.ne_missing(order.shift(-1))
    levels = (rows.with_columns(run_rows=pl.col("rows").cum_sum(), run_hits=pl.col("hits").cum_sum(), last=last)
              .with_columns(accepted=since_group_start(pl.col("run_rows") - pl.col("rows")) + pl.col("rows"),
                            cum_hits=since_group_start(pl.col("run_hits") - pl.col("hits")) + pl.col("hits"))
              .filter("last")
              .select("gid", "conf", "accepted", "cum_hits",
                      level=since_group_start(pl.int_range(pl.len(), dtype=pl.Int64)) + 1,
                      rows=pl.col("accepted") - pl.when(new_group).then(0).otherwise(pl.col("accepted").shift(1)),
                      hits=pl.col("cum_hits") - pl.when(new_group).then(0).otherwise(pl.col("cum_hits").shift(1)),
                      N=pl.col("accepted").last().over("gid")))
    return numbered_as_sql(levels, names)


def polars_over_levels(con) -> dict:
    """The same rows as polars_levels without its sort by group: the paired cells sorted once by confidence,
    then one dimension at a time (each a partition of its cases: a fraction of the memory) joined to their
    groups keeping that order, and each group's running sums, level ends and level numbers taken by
    polars' window `over("gid")`, which keeps every group's rows in the order they came in. A group's run
    of equal confidences ends where the next row of the group differs (NaN as a null: one level, last)."""
    import polars as pl

    cells, names, groups = polars_inputs(con)
    ordered = (cells.select("slice_set", "conf", order=pl.col("conf").fill_nan(None), rows=pl.col("n").cast(pl.Int64),
                            hits=pl.col("n").cast(pl.Int64) * pl.col("correct").cast(pl.Int64))
               .sort("order", descending=True, nulls_last=True))
    order, by = pl.col("order"), "gid"
    parts = []
    for dim in groups["dim"].unique().sort():
        mine = groups.filter(pl.col("dim") == dim).select("slice_set", "gid")
        part = (ordered.lazy().join(mine.lazy(), on="slice_set", how="inner", maintain_order="left")
                .with_columns(accepted=pl.col("rows").cum_sum().over(by), cum_hits=pl.col("hits").cum_sum().over(by),
                              last=order.ne_missing(order.shift(-1).over(by))
                              | (pl.int_range(pl.len()).over(by) == pl.len().over(by) - 1))
                .filter("last")
                .select("gid", "conf", "accepted", "cum_hits",
                        level=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(by),
                        rows=pl.col("accepted") - pl.col("accepted").shift(1, fill_value=0).over(by),
                        hits=pl.col("cum_hits") - pl.col("cum_hits").shift(1, fill_value=0).over(by),
                        N=pl.col("accepted").max().over(by))
                .collect())
        parts.append(part)
    return numbered_as_sql(pl.concat(parts), names)


def same_rows(ours: dict, theirs: dict, names: list) -> bool:
    order = np.lexsort((ours["level"], ours["dim"]))
    return ours["names"] == names and len(order) == len(theirs["level"]) and all(
        np.array_equal(ours[c][order], np.asarray(theirs[c], dtype=ours[c].dtype), equal_nan=c == "conf")
        for c in ("dim", "level", "conf", "rows", "hits", "accepted", "cum_hits", "N"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounded", action="store_true", help="confidences rounded to 4 decimals (default: distinct)")
    ap.add_argument("--root", help="an existing warehouse (with --run); default: a new temporary one")
    ap.add_argument("--run", default="bench", help="the run of --root to read")
    ap.add_argument("--no-check", action="store_true", help="time the plans first, alone (peak RSS), then SQL and "
                    "the floor; no comparison of rows")
    ap.add_argument("--plans", nargs="+", choices=("numpy", "polars", "over"), default=["numpy", "polars", "over"])
    args = ap.parse_args()
    tmp = None if args.root else Path(tempfile.mkdtemp(prefix="lc-levels-"))
    root = Path(args.root) if args.root else tmp
    try:
        wh = Warehouse(root)
        if tmp is not None:
            S.write_run(wh, args.run, S.decisions(args.n, distinct=not args.rounded))
        con = connect(wh, [args.run])
        for name in ("cells", "slice_map"):
            Q.materialize(con, "pipeline/%s.sql" % name, name, {"run_id": args.run})
        plans = {"numpy": ("one sort + scans (numpy)", numpy_levels),
                 "polars": ("one sort + scans (polars)", polars_levels),
                 "over": ("one sort + per-dimension over() (polars)", polars_over_levels)}
        if args.no_check:                      # the plans first, each alone with DuckDB's cells: their peak RSS
            for label, compute in (plans[p] for p in args.plans):
                t = time.perf_counter()
                compute(con)
                print("  %s: %.2f s; peak RSS so far %d MB" % (label, time.perf_counter() - t, peak_mb()))
        t = time.perf_counter()
        for name in ("level_groups", "level_cells", "level_starts", "levels"):
            Q.materialize(con, "pipeline/%s.sql" % name, name)
        con.execute("CREATE TEMP TABLE levels_rows AS SELECT * FROM levels")   # `levels` is a view: run it
        sql_s = time.perf_counter() - t
        t = time.perf_counter()
        con.execute("CREATE TEMP TABLE sorted_rows AS SELECT * FROM level_cells ORDER BY gid, -conf")
        floor_s = time.perf_counter() - t
        print("%s (%s): %d level rows; SQL level_groups, level_cells, level_starts, levels %.2f s; "
              "the floor (DuckDB's bare sort of level_cells) %.2f s" % (
                  args.root or "%d decisions" % args.n, "rounded" if args.rounded else "distinct",
                  con.execute("SELECT count(*) FROM levels_rows").fetchone()[0], sql_s, floor_s))
        if args.no_check:
            return
        theirs = con.execute("SELECT dense_rank() OVER (ORDER BY dim, key) - 1 AS dim, level, conf, rows, hits, "
                             "accepted, cum_hits, N FROM levels_rows JOIN level_groups USING (gid) "
                             "ORDER BY dim, key, level").fetchnumpy()
        names = [tuple(r) for r in con.execute("SELECT DISTINCT dim, key FROM levels JOIN level_groups USING (gid) "
                                               "ORDER BY dim, key").fetchall()]
        con.execute("DROP TABLE levels_rows; DROP TABLE sorted_rows")   # the plans below read cells and slice_map
        for label, compute in (plans[p] for p in args.plans):
            t = time.perf_counter()
            ours = compute(con)
            seconds = time.perf_counter() - t
            print("  %s: %.2f s (SQL / this %.1fx, this / floor %.2fx); same rows: %s; peak RSS so far %d MB" % (
                label, seconds, sql_s / seconds, seconds / floor_s, same_rows(ours, theirs, names), peak_mb()))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
