"""Memory bounds (issue 8 items 5, 6; docs/scale.md Memory): the default DuckDB memory limit is a fixed
1 GiB (50% of RAM on a machine with under 2 GiB), and the bootstrap keeps its replicate values as
(cell code, value) pairs whose intervals equal those of plain string columns."""
from __future__ import annotations

import math
import os
import random
from array import array

import duckdb
import pytest

from laya_cases.report import build as R
from laya_cases.query import sql as sqlfiles
from laya_cases.query.resample import quantile_levels


@pytest.mark.parametrize("ram_gib, want", [(1, "50%"), (1.9, "50%"), (2, "1GiB"), (24, "1GiB"), (512, "1GiB")])
def test_default_memory_limit_is_fixed_unless_ram_is_small(monkeypatch, ram_gib, want):
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": int(ram_gib * 2 ** 30 / 4096)}
    monkeypatch.setattr(os, "sysconf", lambda name: pages[name])
    monkeypatch.delenv(sqlfiles.MEMORY_ENV, raising=False)
    assert sqlfiles.default_memory_limit() == want
    assert sqlfiles.memory_settings()["memory_limit"] == want


def test_connection_gets_the_default_limit_and_the_variable_overrides_it(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 6 * 2 ** 20}[name])
    monkeypatch.setenv(sqlfiles.TEMP_ENV, str(tmp_path / "spill"))
    for env, want in ((None, "1.0 GiB"), ("700MiB", "700.0 MiB")):
        if env is None:
            monkeypatch.delenv(sqlfiles.MEMORY_ENV, raising=False)
        else:
            monkeypatch.setenv(sqlfiles.MEMORY_ENV, env)
        con = duckdb.connect()
        sqlfiles.prepare_connection(con, functions=False)
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == want


def _intervals(table):
    con = duckdb.connect()
    con.register("boot_values", table)
    lower, upper = quantile_levels(0.95)
    return sorted(tuple(r) for r in sqlfiles.query(con, "bootstrap/intervals.sql", {"lower": lower, "upper": upper}).fetchall())


def test_coded_replicate_values_give_the_intervals_of_plain_strings():
    rng = random.Random(5)
    cells = {}
    codes, values, plain = array("i"), array("d"), []
    for replicate in range(120):
        for dim, key in (("overall", ""), ("language", "de"), ("language", "en"), ("tag", "vip")):
            for metric in ("choice_accuracy", "ece"):
                if rng.random() < 0.1:
                    continue                                  # absent in this replicate
                value = rng.choice([0.25, 0.5, 0.75, None, math.nan, rng.random()])
                codes.append(cells.setdefault((dim, key, metric), len(cells)))
                values.append(math.nan if value is None else value)
                plain.append({"dim": "%s@%d" % (dim, replicate), "key": key, "metric": metric, "value": value})
    import pyarrow as pa

    want = _intervals(pa.Table.from_pylist(plain, schema=pa.schema([("dim", pa.string()), ("key", pa.string()),
                                                                    ("metric", pa.string()), ("value", pa.float64())])))
    coded = R._replicate_values(cells, codes, values, decoded=False)
    assert pa.types.is_dictionary(coded.schema.field("dim").type) and coded.num_rows == len(plain)
    assert _intervals(coded) == want
    assert _intervals(R._replicate_values(cells, codes, values, decoded=True)) == want
    assert len(want) == 8 and all(r[3] >= 2 for r in want)
    assert _intervals(R._replicate_values({}, array("i"), array("d"), decoded=False)) == []
