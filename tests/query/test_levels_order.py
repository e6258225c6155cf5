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
