"""sql/macros/exact_sum.sql against math.fsum, bit for bit (S3.3, S9.8), on random groups: magnitudes from
subnormal to 2^200 (bits below 2^-116 and above 2^103 go through the rest list), ties that only the smallest
bits break, NaN and infinities, one-row and empty groups. The unweighted sum (lc_exact_sum, BIGINT limbs) and
the weighted one (lc_exact_sum_w, HUGEINT limbs times w) must both give fsum of the values repeated w times."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import duckdb
import pytest

from laya_cases.query.sql import prepare_connection


def _value(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.03:
        return rng.choice([math.nan, math.inf, -math.inf])
    if kind < 0.5:
        return rng.random() * rng.choice([1, -1])                      # a confidence, a risk
    exponent = rng.choice([0, -53, -60, -106, -116, -117, -150, -1022, -1074, 30, 52, 60, 102, 103, 104, 200])
    return math.ldexp(rng.choice([1.0, 1.5, 1 + 2.0 ** -52, rng.random() + 0.5]), exponent) * rng.choice([1, -1])


def _fsum(values, weights):
    """math.fsum of each value repeated its weight's times: the exact sum rounded once (float() of a
    Fraction rounds correctly, as fsum does); NaN, or +inf with -inf, is NaN, a lone infinity wins."""
    if any(math.isnan(v) for v in values) or (math.inf in values and -math.inf in values):
        return math.nan
    if math.inf in values or -math.inf in values:
        return math.inf if math.inf in values else -math.inf
    if all(w == 1 for w in weights):
        assert float(sum(map(Fraction, values), Fraction(0))) == math.fsum(values) or not values
    return float(sum((Fraction(v) * w for v, w in zip(values, weights)), Fraction(0)))


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    prepare_connection(connection)
    return connection


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and
                                         (math.isnan(a) and math.isnan(b) or (a == b and math.copysign(1, a) == math.copysign(1, b))))


@pytest.mark.parametrize("seed", range(6))
def test_exact_sums_are_fsum_bit_for_bit(con, seed):
    rng = random.Random(seed)
    rows, expected = [], {}
    for group in range(300):
        n = rng.choice([0, 1, 2, 3, 10, 200])
        values = [_value(rng) for _ in range(n)]
        if group % 5 == 0 and n:
            values += [1.0, 2.0 ** -53, -1.0]                           # a cancellation the last bits decide
        weights = [rng.choice([1, 1, 2, 7, 10 ** 6]) for _ in values]
        rows += [(group, v, w) for v, w in zip(values, weights)]
        expected[group] = (_fsum(values, [1] * len(values)) if values else None,
                           _fsum(values, weights) if values else None)
    con.execute("CREATE OR REPLACE TEMP TABLE xs AS SELECT unnest(?::INTEGER[]) AS g, unnest(?::DOUBLE[]) AS x, "
                "unnest(?::BIGINT[]) AS w", [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]])
    got = {g: (s, sw) for g, s, sw in con.execute(
        "SELECT g, lc_exact_sum(x), lc_exact_sum_w(x, w) FROM xs GROUP BY g").fetchall()}
    for group, (plain, weighted) in expected.items():
        if plain is None:
            assert group not in got                                     # an empty group has no row
            continue
        assert _same(got[group][0], plain), (group, got[group][0], plain)
        assert _same(got[group][1], weighted), (group, got[group][1], weighted)


def test_an_empty_input_sums_to_null(con):
    assert con.execute("SELECT lc_exact_sum(x), lc_exact_sum_w(x, 1) FROM (SELECT 1.0 AS x) WHERE false").fetchall() \
        == [(None, None)]
