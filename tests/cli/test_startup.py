"""`laya-cases runs` starts fast (issue 8): its path imports none of the heavy libraries.

Structural, not timed (bench/startup_bench.py times it against `import duckdb`): the `runs` path, entered
as the console script enters it, leaves torch, transformers, matplotlib, polars, pyarrow and numpy out of
sys.modules. The pieces that make that possible are checked against what they replace: schema.py's type
names against the pyarrow schemas, the footer check read through DuckDB, the empty views' types.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from helpers import ROOT, cli
from laya_cases.query.sql import connect

HEAVY = ("torch", "transformers", "matplotlib", "polars", "pyarrow", "numpy", "pandas", "datasets", "sklearn")
ANSWERS = ROOT / "data" / "support.answers.jsonl"

# Runs main() as the console script does, then names every heavy top-level module that got imported.
PROBE = """
import json, sys
from laya_cases_cli.app import main
sys.argv = ["laya-cases"] + sys.argv[1:]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "heavy": heavy}) + "\\n")
""" % (HEAVY,)


def probe(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=str(ROOT))
    line = [x for x in proc.stderr.splitlines() if x.startswith("PROBE ")]
    assert line, proc.stderr
    return dict(json.loads(line[-1][len("PROBE "):]), stdout=proc.stdout, stderr=proc.stderr)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("startup") / "wh"
    cli("ingest", str(ANSWERS), "-w", str(wh), "--run-id", "r1", check=True)
    return wh


@pytest.mark.parametrize("fmt", ["table", "json", "app -w"])
@pytest.mark.slow
def test_runs_imports_no_heavy_library(store, fmt):
    # "app -w": the warehouse before the command's name, which is still found for the light path
    args = ("-w", str(store), "runs") if fmt == "app -w" else ("runs", "-w", str(store), "--format", fmt)
    found = probe(*args)
    assert found["code"] == 0, found["stderr"]
    assert "r1" in found["stdout"]
    assert found["heavy"] == [], "`laya-cases runs` imported %s" % found["heavy"]


@pytest.mark.slow
def test_runs_of_an_empty_warehouse_imports_no_heavy_library(tmp_path):
    found = probe("runs", "-w", str(tmp_path / "none"))
    assert found["code"] == 0 and "no committed runs" in found["stdout"], found["stderr"]
    assert found["heavy"] == []


@pytest.mark.slow
def test_the_probe_sees_a_heavy_import(store):
    """The probe can fail: a report reads its cases through pyarrow."""
    found = probe("report", "r1", "-w", str(store))
    assert found["code"] == 0, found["stderr"]
    assert "pyarrow" in found["heavy"] or "numpy" in found["heavy"]


def test_light_commands_name_the_module_that_registers_them():
    """main() imports only cli/<module>.py for a light command: the table must say where it lives."""
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import LIGHT_COMMANDS, app

    where = {(info.name or info.callback.__name__.replace("_", "-")): info.callback.__module__
             for info in app.registered_commands}
    for name, module in LIGHT_COMMANDS.items():
        assert where.get(name) == "laya_cases_cli." + module, (name, where.get(name))


def test_schema_type_names_match_the_pyarrow_schemas():
    """COLUMNS holds type names; the pyarrow schemas built from them on first use, and the DuckDB
    types the views give a column that an older file lacks, agree with DuckDB's reading of pyarrow."""
    from laya_cases.store import schema

    con = duckdb.connect()
    for table, columns in (("DECISION_SCHEMA", schema.COLUMNS), ("RUN_SCHEMA", schema.RUN_COLUMNS)):
        arrow = getattr(schema, table)
        assert arrow is getattr(schema, table)                      # built once
        assert [f.name for f in arrow] == [name for name, _, _ in columns]
        assert [str(f.type).replace("item: ", "") for f in arrow] == [kind for _, kind, _ in columns]
        con.register("t", arrow.empty_table())
        duck = [r[1] for r in con.execute("DESCRIBE t").fetchall()]
        assert duck == [schema.duck_type(kind) for _, kind, _ in columns], table
        con.unregister("t")
    assert schema.SLICE_SET_SCHEMA.names == schema.SLICE_SET_COLUMNS
    assert schema.DECISION_SCHEMA.metadata == {b"schema": schema.SCHEMA_VERSION.encode()}
    with pytest.raises(AttributeError):
        schema.NO_SUCH_SCHEMA  # noqa: B018


def test_an_empty_warehouse_has_the_views_of_a_full_one(store, tmp_path):
    """No files: each view is typed as the files would read (no pyarrow table behind it)."""
    from laya_cases.store.warehouse import Warehouse

    full, empty = connect(Warehouse(store)), connect(Warehouse(tmp_path / "none"))
    for view in ("decisions", "cases", "errors", "runs", "slice_sets"):
        described = [con.execute("DESCRIBE %s" % view).fetchall() for con in (full, empty)]
        assert [r[:2] for r in described[1]] == [r[:2] for r in described[0]], view
        assert empty.execute("SELECT count(*) FROM %s" % view).fetchone()[0] == 0
    one = connect(Warehouse(store), ["r1"])
    assert [r[:2] for r in one.execute("DESCRIBE slice_sets").fetchall()] == \
        [r[:2] for r in connect(Warehouse(tmp_path / "none"), []).execute("DESCRIBE slice_sets").fetchall()]


def test_footers_read_through_duckdb(store, tmp_path):
    """The reader's footer check (store_check.footer) without pyarrow: rows, columns, damage."""
    from laya_cases.store import check as C
    from laya_cases.store.warehouse import Warehouse

    wh = Warehouse(store)
    run_file = wh.run_file("r1")
    assert C.footer(run_file, ["run_id", "n_cases"]) == 1
    with pytest.raises(C.Damage, match="lacks column"):
        C.footer(run_file, ["run_id", "no_such_column"])
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\x00garbage" * 20 + b"PAR1")
    with pytest.raises(C.Damage, match="not a readable Parquet file"):
        C.footer(bad, [])
    with pytest.raises(C.Damage, match="missing"):
        C.footer(tmp_path / "gone.parquet", [])
    C.prefetch([bad, run_file])                  # one bad file: nothing cached, nothing raised
    assert C.run_problem(wh, "r1") is None
