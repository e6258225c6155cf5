"""Partial exact sums (sql/pipeline/slice_sums.sql, lc_limbs_total/_mean) equal the one-pass exact sums.

The order-free metrics add per-slice-set partial sums per group and round once; the exact sum is a
function of the multiset alone, so every value must equal, bit for bit, the one-pass lc_exact_* sum
over the same cases grouped per (dim, key) (pipeline/slice_cells.sql, the table they read before),
and math.fsum. Random slice maps with repeated tags, sets in many groups, groups of only NULL
confidences, and values that break float sums: 1e308 pairs that cancel, +-inf, NaN, -0.0, subnormals.
"""
from __future__ import annotations

import math
import random
import struct
from fractions import Fraction

import duckdb
import pytest

from laya_cases.query import sql as Q

INF, NAN = math.inf, math.nan
POOL = [0.0, -0.0, 0.1, 0.5, 0.7, 1.0, 1 / 15, 2 / 15, 14 / 15, 1e308, -1e308, 1.7e308, 5e-324, 1e-320, 2.0 ** -117,
        3.0 ** 70, -2.5, 1.5, 1e31, 2.0 ** 103, None]

#: the one-pass definitions the metric files had before slice_sums (over pipeline/slice_cells.sql)
ONE_PASS = {
    "metrics/mean_confidence.sql": """
        SELECT dim, key, 'mean_confidence' AS metric, lc_exact_mean_w(conf, n) AS value, sum(n) AS n
        FROM slice_cells WHERE conf IS NOT NULL GROUP BY dim, key""",
    "metrics/brier.sql": """
        SELECT dim, key, 'brier' AS metric,
               lc_exact_mean_w((conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END)
                               * (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END), n) AS value, sum(n) AS n_paired
        FROM slice_cells WHERE conf IS NOT NULL AND correct IS NOT NULL GROUP BY dim, key""",
    "pipeline/groups.sql": "SELECT dim, key, sum(n) AS n_cases FROM slice_cells GROUP BY dim, key",
    "metrics/choice_accuracy.sql": """
        SELECT dim, key, 'choice_accuracy' AS metric,
               CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS value,
               sum(n) AS n, sum(CASE WHEN correct THEN n ELSE 0 END) AS hits
        FROM slice_cells WHERE lc_accuracy_value('choice', answer_type, correct) IS NOT NULL GROUP BY dim, key""",
    "reliability": """
        SELECT dim, key, lc_reliability_bin(conf) AS bin, sum(n) AS n_b,
               lc_exact_sum_w(conf, n) / CAST(sum(n) AS DOUBLE) AS mean_confidence,
               CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS accuracy
        FROM slice_cells WHERE correct IS NOT NULL AND lc_reliability_bin(conf) IS NOT NULL GROUP BY ALL""",
}


def _bits(row):
    return tuple(struct.pack("<d", v) if isinstance(v, float) else v for v in row)


def _random_store(rng: random.Random, con) -> list:
    n_sets = rng.randrange(1, 12)
    cells, smap = [], []
    for s in range(n_sets):
        answer_type, correct = rng.choice([("choice", True), ("choice", False), ("noul", True), ("score", None)])
        groups = [("overall", "")] + rng.sample([("language", "en"), ("language", "de"), ("model", "m"),
                                                 ("tag", "x"), ("tag", "x"), ("tag", "y"), ("qid", "q")],
                                                rng.randrange(0, 5))
        smap += [[s, answer_type, correct, dim, key] for dim, key in groups]
        pool = POOL + ([INF] if rng.random() < 0.15 else []) + ([-INF] if rng.random() < 0.15 else []) \
            + ([NAN] if rng.random() < 0.1 else [])
        confs = {rng.choice(pool) if rng.random() < 0.6 else rng.random() for _ in range(rng.randrange(0, 8))}
        cells += [[s, c, rng.randrange(1, 5)] for c in confs]
    con.execute("CREATE OR REPLACE TABLE cells (slice_set BIGINT, conf DOUBLE, n BIGINT)")
    con.execute("CREATE OR REPLACE TABLE slice_map (slice_set BIGINT, answer_type VARCHAR, correct BOOLEAN, "
                "dim VARCHAR, key VARCHAR)")
    if cells:
        con.executemany("INSERT INTO cells VALUES (?, ?, ?)", cells)
    con.executemany("INSERT INTO slice_map VALUES (?, ?, ?, ?, ?)", smap)
    return cells, smap


def _reference_mean(values):
    """fsum(values) / n, from the exact rational (fsum's own rounding; S3.3); where that sum overflows
    binary64 the exact mean (the documented case of two 1e308 averaging 1e308)."""
    if any(math.isnan(v) for v in values) or (INF in values and -INF in values):
        return NAN
    if INF in values or -INF in values:
        return INF if INF in values else -INF
    total = sum((Fraction(v) for v in values), Fraction(0))
    try:
        return float(total) / len(values)
    except OverflowError:
        try:
            return float(total / len(values))
        except OverflowError:
            return INF if total > 0 else -INF


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_partial_sums_equal_the_one_pass_sums_bit_for_bit(seed):
    rng = random.Random(seed)
    con = duckdb.connect()
    Q.prepare_connection(con)
    cells, smap = _random_store(rng, con)
    Q.materialize(con, "pipeline/slice_cells.sql", "slice_cells")
    Q.materialize(con, "pipeline/slice_sums.sql", "slice_sums")
    Q.materialize(con, "metrics/reliability.sql", "reliability")
    for name, one_pass in ONE_PASS.items():
        if name == "reliability":
            new = con.execute("SELECT dim, key, bin, n_b, mean_confidence, accuracy FROM reliability WHERE n_b > 0")
        else:
            new = Q.query(con, name)
        got = sorted(map(_bits, new.fetchall()))
        want = sorted(map(_bits, con.execute(one_pass).fetchall()))
        assert got == want, name
    # and mean_confidence is fsum / n of the group's cases (a set counted once per group row it maps to)
    by_group = {}
    for s, answer_type, correct, dim, key in smap:
        by_group.setdefault((dim, key), []).extend(c for cs, c, n in cells if cs == s and c is not None
                                                   for _ in range(n))
    published = {(d, k): v for d, k, _, v, _ in Q.query(con, "metrics/mean_confidence.sql").fetchall()}
    assert set(published) == {g for g, vs in by_group.items() if vs}
    for group, values in by_group.items():
        if values:
            assert _bits([published[group]]) == _bits([_reference_mean(values)]) or (
                math.isnan(published[group]) and math.isnan(_reference_mean(values))), group
    finite = [v for vs in by_group.values() for v in vs if math.isfinite(v)]
    if finite and all(abs(v) < 1e300 for v in finite):
        assert math.fsum(finite) == float(sum(map(Fraction, finite)))      # the reference above is fsum's rounding


def test_a_wrong_partial_sum_is_caught():
    """The comparison is not vacuous: rounding each slice set's sum before adding differs on these values."""
    parts = [[1e308, 1.0], [-1e308]]
    assert math.fsum([math.fsum(p) for p in parts]) != math.fsum([v for p in parts for v in p])


@pytest.mark.parametrize("seed", [0, 1, *(pytest.param(s, marks=pytest.mark.slow) for s in range(2, 6))])
def test_bootstrap_slice_sums_are_the_sums_of_the_resampled_cells(seed):
    """bootstrap/slice_sums.sql (each row's partial sums times its weight) gives every replicate the values
    pipeline/slice_sums.sql gives the cells of that replicate's resampled rows, for every order-free metric."""
    rng = random.Random(1000 + seed)
    con = duckdb.connect()
    Q.prepare_connection(con)
    cells, smap = _random_store(rng, con)
    row_cells = [[rng.randrange(4), s, c, n] for s, c, n in cells]
    weights = [[b, r, rng.randrange(1, 4)] for b in range(3) for r in range(4) if rng.random() < 0.7]
    con.execute("CREATE TABLE row_cells (row_index BIGINT, slice_set BIGINT, conf DOUBLE, n BIGINT)")
    con.execute("CREATE TABLE boot_weights (replicate BIGINT, row_index BIGINT, w BIGINT)")
    if row_cells:
        con.executemany("INSERT INTO row_cells VALUES (?, ?, ?, ?)", row_cells)
    if weights:
        con.executemany("INSERT INTO boot_weights VALUES (?, ?, ?)", weights)
    metrics = ["metrics/mean_confidence.sql", "metrics/brier.sql", "metrics/choice_accuracy.sql",
               "metrics/noul_accuracy.sql", "pipeline/groups.sql"]
    Q.materialize(con, "bootstrap/row_sums.sql", "row_sums")
    Q.materialize(con, "bootstrap/slice_sums.sql", "slice_sums")
    Q.materialize(con, "metrics/reliability.sql", "reliability")
    got = {m: sorted(map(_bits, Q.query(con, m).fetchall())) for m in metrics}
    got["reliability"] = sorted(map(_bits, con.execute("SELECT * FROM reliability").fetchall()))
    want = {m: [] for m in got}
    for b in range(3):
        con.execute("CREATE OR REPLACE TABLE cells AS SELECT c.slice_set, c.conf, sum(c.n * w.w) AS n "
                    "FROM row_cells c JOIN boot_weights w USING (row_index) WHERE w.replicate = ? GROUP BY ALL", [b])
        Q.materialize(con, "pipeline/slice_sums.sql", "slice_sums")
        Q.materialize(con, "metrics/reliability.sql", "reliability")
        for m in metrics:
            want[m] += [_bits((r[0] + "@%d" % b,) + r[1:]) for r in Q.query(con, m).fetchall()]
        want["reliability"] += [_bits((r[0] + "@%d" % b,) + r[1:])
                                for r in con.execute("SELECT * FROM reliability").fetchall()]
    for m in got:
        assert got[m] == sorted(want[m]), m
