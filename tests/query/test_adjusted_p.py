"""sql/compare/adjusted_p.sql against a hand numpy Holm step-down and Benjamini-Hochberg step-up
(tests/multiple_testing.py), on random families with ties, untested members (null p: no discordant pair) and empty families."""
from __future__ import annotations

import math
import random

import duckdb
import pyarrow as pa

from laya_cases.query import sql as sqlfiles
from multiple_testing import adjust


def adjusted(families):
    con = duckdb.connect()
    rows = [(f, "m%03d" % i, None if v is None or math.isnan(v) else v)
            for f, ps in families.items() for i, v in enumerate(ps)]
    con.register("p_family", pa.table({"family": pa.array([r[0] for r in rows], pa.string()),
                                       "member": pa.array([r[1] for r in rows], pa.string()),
                                       "p": pa.array([r[2] for r in rows], pa.float64())}))
    return {(r["family"], r["member"]): r for r in sqlfiles.rows(sqlfiles.query(con, "compare/adjusted_p.sql"))}


def test_matches_numpy_on_random_families_with_ties_and_untested_members():
    rng = random.Random(34)
    families = {}
    for f in range(60):
        m = rng.choice([0, 1, 2, 3, 5, 8, 13, 50])
        grid = [0.001, 0.01, 0.02, 0.04, 0.05, 0.2, 0.5, 1.0]      # repeated values: ties
        families["f%02d" % f] = [None if rng.random() < 0.15 else float("nan") if rng.random() < 0.05
                                 else rng.choice(grid) if rng.random() < 0.4 else rng.random() ** 3
                                 for _ in range(m)]
    families["all_untested"] = [None, float("nan"), None]
    got = adjusted(families)
    assert len(got) == sum(len(ps) for ps in families.values())    # an empty family has no row
    for f, ps in families.items():
        for i, (m, h, b) in enumerate(adjust(ps)):
            row = got[(f, "m%03d" % i)]
            assert row["m"] == m
            for name, want in (("holm_p", h), ("bh_p", b)):
                if want is None:
                    assert row[name] is None
                else:
                    assert math.isclose(row[name], want, rel_tol=1e-15, abs_tol=0), (f, i, name, row, want)
        tested = sorted(((v, got[(f, "m%03d" % i)]) for i, v in enumerate(ps)
                         if v is not None and not math.isnan(v)), key=lambda t: t[0])
        for (p0, a), (p1, b_) in zip(tested, tested[1:]):          # monotone in p, never below p
            assert a["holm_p"] <= b_["holm_p"] and a["bh_p"] <= b_["bh_p"]
        for _, row in tested:
            # p <= BH <= Holm <= 1, up to the last bit (m * p and p / (1 / m) round differently)
            assert row["p"] <= row["bh_p"] <= row["holm_p"] * (1 + 1e-15) and row["holm_p"] <= 1.0


def test_known_values():
    # m = 4: Holm = 4*0.01, max(4*0.01, 3*0.02), max(.., 2*0.03), 1*0.5; BH = min from the top of 4/i*p
    got = adjusted({"x": [0.03, 0.01, 0.5, 0.02]})
    assert [round(got[("x", "m%03d" % i)]["holm_p"], 12) for i in range(4)] == [0.06, 0.04, 0.5, 0.06]
    assert [round(got[("x", "m%03d" % i)]["bh_p"], 12) for i in range(4)] == [0.04, 0.04, 0.5, 0.04]
