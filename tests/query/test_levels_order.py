"""sql/pipeline/levels.sql takes its running counts from DuckDB's streaming window, in the order a subquery
sorted the rows; sql/_spark/pipeline/levels.sql lets the window sort them itself. Both files run here on
DuckDB, over enough rows for parallel scans, under a small memory limit and on several threads, and are compared with
each other and with a running count in numpy (S3.12 order: +inf first, -inf after every finite value,
NaN last as one level)."""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from laya_cases.query import sql as Q

COLUMNS = ["gid", "level", "conf", "rows", "hits", "accepted", "cum_hits", "N"]


def _level_cells(rng: np.random.Generator, n: int) -> pa.Table:
    """(gid, conf, rows, hits) with one row per (gid, conf), as level_cells.sql aggregates them: full
    precision, rounded (many cases on one level), +-inf, and NaN, in random row order; 40 groups."""
    gid = rng.integers(1, 41, n)
    conf = rng.random(n)
    kind = rng.integers(0, 100, n)
    conf = np.where(kind < 10, np.round(conf, 2), conf)
    conf = np.where(kind == 10, np.inf, np.where(kind == 11, -np.inf, np.where(kind == 12, np.nan, conf)))
    raw = pa.table({"gid": gid, "conf": conf, "hit": rng.integers(0, 2, n)})
    cells = duckdb.connect().sql("SELECT gid, conf, CAST(count(*) AS BIGINT) AS rows, CAST(sum(hit) AS BIGINT) "
                                 "AS hits FROM raw GROUP BY gid, conf").to_arrow_table()
    return cells.take(pa.array(rng.permutation(cells.num_rows)))


def _numpy_levels(cells: pa.Table) -> list:
    gid = cells.column("gid").to_numpy()
    conf = cells.column("conf").to_numpy()
    rows = cells.column("rows").to_numpy()
    hits = cells.column("hits").to_numpy()
    key = np.where(np.isnan(conf), np.inf, -conf)            # -conf ascending, NaN after every number
    rank = np.where(np.isnan(conf), 1, 0)
    order = np.lexsort((key, rank, gid))
    out = []
    for g in np.unique(gid):
        mine = order[gid[order] == g]
        accepted, cum = np.cumsum(rows[mine]), np.cumsum(hits[mine])
        out += [(int(g), i + 1, float(conf[j]), int(rows[j]), int(hits[j]), int(accepted[i]), int(cum[i]),
                 int(accepted[-1])) for i, j in enumerate(mine)]
    return out


def _run(cells: pa.Table, path: str, threads: int) -> list:
    con = duckdb.connect()
    Q.prepare_connection(con, functions=False)
    con.execute("SET threads = %d" % threads)
    con.execute("SET memory_limit = '64MB'")                # a small limit, as a big run has
    con.register("level_cells_in", cells)
    con.execute("CREATE TEMP TABLE level_cells AS SELECT * FROM level_cells_in")
    con.unregister("level_cells_in")
    Q.materialize(con, "pipeline/level_starts.sql", "level_starts")
    result = con.execute("SELECT * FROM (%s) ORDER BY gid, level" % Q.text(path))
    assert [d[0] for d in result.description] == COLUMNS
    return result.fetchall()


def _same(a: list, b: list) -> bool:
    """Rows equal, NaN equal to NaN (the last level of a group that has NaNs)."""
    return len(a) == len(b) and all(
        x[:2] == y[:2] and x[3:] == y[3:] and (x[2] == y[2] or (x[2] != x[2] and y[2] != y[2])) for x, y in zip(a, b))


@pytest.mark.slow   # enough generated rows for parallel scans, twice
@pytest.mark.parametrize("threads", [1, 4])
def test_streaming_levels_equal_the_windowed_file_and_numpy(threads):
    cells = _level_cells(np.random.default_rng(2026 + threads), 600_000)
    assert cells.num_rows > 500_000                         # several of DuckDB's 122,880-row groups
    expected = _numpy_levels(cells)
    streaming = _run(cells, "pipeline/levels.sql", threads)
    windowed = _run(cells, "_spark/pipeline/levels.sql", threads)
    assert _same(streaming, expected)
    assert _same(windowed, expected)


def test_the_comparison_sees_a_level_out_of_order():
    """Not vacuous: the numpy levels with two neighbouring levels swapped are not the file's rows."""
    cells = _level_cells(np.random.default_rng(1), 2_000)
    expected = _numpy_levels(cells)
    rows = _run(cells, "pipeline/levels.sql", 2)
    assert _same(rows, expected)
    swapped = list(expected)
    swapped[10], swapped[11] = swapped[11], swapped[10]
    assert not _same(rows, swapped)


def _points_con(cells: pa.Table, path: str, coverages: list) -> duckdb.DuckDBPyConnection:
    """level_cells -> level_starts -> levels (the view DuckDB keeps) -> level_points from `path`, and
    level_groups naming every group (group 1 the overall one, for risk_coverage)."""
    con = duckdb.connect()
    Q.prepare_connection(con)
    con.execute("SET threads = 2")
    con.register("level_cells_in", cells)
    con.execute("CREATE TEMP TABLE level_cells AS SELECT * FROM level_cells_in")
    con.unregister("level_cells_in")
    con.execute("CREATE TEMP TABLE level_groups AS SELECT DISTINCT gid, CASE WHEN gid = 1 THEN 'overall' ELSE 'g' END "
                "AS dim, CASE WHEN gid = 1 THEN '' ELSE CAST(gid AS VARCHAR) END AS key FROM level_cells")
    Q.materialize(con, "pipeline/level_starts.sql", "level_starts")
    Q.materialize(con, "pipeline/levels.sql", "levels", view=True)
    con.execute("CREATE TEMP TABLE level_points AS %s" % Q.text(path), {"coverages": coverages})
    return con


COVERAGES = [0.5, 0.8, 0.3333, 0.123456789, 1.0]


@pytest.mark.slow   # enough generated rows for groups of over 1,000 levels
def test_level_points_hold_every_cut_the_full_curve_has():
    """level_points keeps a superset of the levels the cuts fall on: the readers (aurc, selective_accuracy at
    each coverage, risk_coverage) give the same rows over it as over every level, and the Spark version of
    the file (run here on DuckDB) keeps the same rows."""
    many = _level_cells(np.random.default_rng(7), 200_000)        # 4 groups of ~45,000 levels (40 regrouped)
    cells = duckdb.connect().sql("SELECT gid % 4 + 1 AS gid, conf, CAST(sum(rows) AS BIGINT) AS rows, CAST(sum(hits) "
                                 "AS BIGINT) AS hits FROM many GROUP BY ALL").to_arrow_table()
    con = _points_con(cells, "pipeline/level_points.sql", COVERAGES)
    kept = con.execute("SELECT * FROM level_points ORDER BY gid, level").fetchall()
    spark = _points_con(cells, "_spark/pipeline/level_points.sql", COVERAGES)
    assert _same_points(kept, spark.execute("SELECT * FROM level_points ORDER BY gid, level").fetchall())
    total = con.execute("SELECT count(*) FROM levels").fetchone()[0]
    assert len(kept) < total / 2                               # far from every level
    full = _points_con(cells, "pipeline/level_points.sql", COVERAGES)
    full.execute("CREATE OR REPLACE TEMP TABLE level_points AS SELECT p.gid, p.N, p.n_levels, p.aurc, l.level, l.conf, "
                 "l.rows, l.hits, l.accepted, l.cum_hits FROM levels l JOIN (SELECT DISTINCT gid, N, n_levels, aurc "
                 "FROM level_points) p USING (gid)")
    for name, params in [("metrics/aurc.sql", None), ("pipeline/risk_coverage.sql", {"coverages": COVERAGES})] + [
            ("metrics/selective_accuracy.sql", {"coverage": c}) for c in COVERAGES + [0.001, 0.999]]:
        ours = Q.query(con, name, params).fetchall()
        assert ours and _same_points(sorted(ours, key=repr), sorted(Q.query(full, name, params).fetchall(), key=repr)), name


def _same_points(a: list, b: list) -> bool:
    """Rows equal, NaN equal to NaN."""
    return len(a) == len(b) and all(len(x) == len(y) and all(u == v or (u != u and v != v) for u, v in zip(x, y))
                                    for x, y in zip(a, b))
