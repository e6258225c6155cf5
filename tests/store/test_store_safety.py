"""Nothing bad reaches the store, and a damaged store still reads (issue 15, items 3-7).

Each class of bad input is one line on stderr, exit 2, no traceback, and the store's tree unchanged:
warehouse paths that look like globs, writing or multi-statement `sql`, bad `-w` paths. A damaged run
is left out and named (`runs`, `sql`, `report`, `check`); `gc` and the next commit remove only what
dead laya-cases writers left; data files are fsynced before the commit renames.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, cli, snapshot_tree
from laya_cases_cli.app import app

ANSWERS = ROOT / "data" / "support.answers.jsonl"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def ok(*args: str):
    result = invoke(*args)
    assert result.exit_code == 0, (args, result.stderr, result.exception)
    return result


def one_line_error(result, *needles: str, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya-cases: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def ingest(wh: Path, run_id: str) -> None:
    ok("ingest", str(ANSWERS), "-w", str(wh), "--run-id", run_id)


def sql(wh: Path, query: str):
    return json.loads(ok("sql", query, "-w", str(wh), "--format", "json").stdout)


# ---------------------------------------------------------------------------- 3. a path, not a pattern
_NAMES = ["wh[1]", "wh*", "wh?", "wh{1,2}", "a'b", 'a"b', "a\\b", "a b", "y=1", "[*?]{}'\" ]x"]


@pytest.fixture(scope="module")
def siblings(tmp_path_factory) -> Path:
    """wh1, wh2 and one warehouse per tricky name, side by side, each with one run of its own."""
    top = tmp_path_factory.mktemp("globs")
    for i, name in enumerate(["wh1", "wh2"] + _NAMES):
        ingest(top / name, "r%d" % i)
    return top


@pytest.mark.parametrize("name", [n if n in ("wh*", "[*?]{}'\" ]x") else pytest.param(n, marks=pytest.mark.slow)
                                  for n in _NAMES])   # slow: one store read per name
@pytest.mark.slow
def test_each_warehouse_reads_only_itself(siblings, name):
    wh = siblings / name
    rid = "r%d" % (2 + _NAMES.index(name))
    assert sql(wh, "SELECT DISTINCT run_id FROM cases") == [{"run_id": rid}]
    assert sql(wh, "SELECT DISTINCT run_id FROM slice_sets") == [{"run_id": rid}]
    assert [r["run_id"] for r in json.loads(ok("runs", "-w", str(wh), "--format", "json").stdout)] == [rid]
    columns = [r["column_name"] for r in sql(wh, "DESCRIBE cases")]
    assert columns[-1] == "run_id" and "y" not in columns          # no `key=value` of the root is a column
    ok("report", rid, "-w", str(wh))


def test_backslash_with_a_glob_character_is_refused_not_misread(tmp_path):
    """DuckDB treats `\\` as a path separator in a pattern: such a root is one line, exit 2."""
    wh = tmp_path / "a\\[1]"
    ingest(wh, "r")
    before = snapshot_tree(wh)
    for args in (["runs"], ["sql", "SELECT 1"], ["report", "r"], ["check"]):
        if args != ["check"]:
            one_line_error(invoke(*args, "-w", str(wh)), "backslash")
    assert snapshot_tree(wh) == before


# ---------------------------------------------------------------------------- 4. sql is read-only
@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("ro") / "wh"
    ingest(wh, "base")
    return wh


def _refused(store: Path, tmp_path: Path, *args: str, needles=()) -> None:
    before = snapshot_tree(store)
    outside = sorted(os.listdir(tmp_path))
    one_line_error(invoke("sql", *args, "-w", str(store)), *needles)
    assert snapshot_tree(store) == before
    assert sorted(os.listdir(tmp_path)) == outside


@pytest.mark.parametrize("query,needles", [
    ("COPY (FROM cases) TO '{store}/cases/run_id=base/part-00001.parquet'", ["read-only", "COPY"]),
    ("COPY (FROM cases) TO '{tmp}/out.csv'", ["read-only", "COPY", "--out FILE"]),
    ("ATTACH '{tmp}/x.db' AS x", ["read-only", "ATTACH"]),
    ("EXPORT DATABASE '{tmp}/export'", ["read-only", "EXPORT"]),
    ("INSTALL httpfs", ["read-only"]),
    ("LOAD httpfs", ["read-only"]),
    ("SET enable_external_access = true", ["read-only", "SET"]),
    ("CREATE TABLE t AS SELECT 1", ["read-only", "CREATE"]),
    ("PRAGMA enable_profiling", ["read-only", "PRAGMA"]),
    ("EXPLAIN ANALYZE COPY (SELECT 1) TO '{tmp}/e.csv'", ["read-only", "COPY"]),
    ("SELECT 1; SELECT 2", ["2 statements", "nothing was run"]),
    ("SELECT 1; COPY (SELECT 1) TO '{tmp}/m.csv'", ["2 statements"]),
], ids=["copy-into-run", "copy-outside", "attach", "export", "install", "load", "set", "create", "pragma",
        "explain-analyze-copy", "two-selects", "select-then-copy"])
def test_sql_refuses_writes_and_several_statements(store, tmp_path, query, needles):
    _refused(store, tmp_path, query.format(store=store, tmp=tmp_path), needles=needles)


@pytest.mark.parametrize("target", ["{store}/cases/run_id=base/part-00001.parquet", "{store}/x.csv", "{store}",
                                    "{parent}", "s3://bucket/x.csv", "{tmp}/outside.csv"],
                         ids=["run-folder", "root-file", "root", "above-root", "url", "outside"])
def test_allow_write_is_gone_and_says_how_to_write_a_result(store, tmp_path, target):
    """sql runs no COPY at all now (tests/query/test_sql_writes.py has the routes a COPY check once missed);
    the flag is kept so an old script gets one line naming --out."""
    query = "COPY (FROM cases) TO '%s'" % target.format(store=store, parent=store.parent, tmp=tmp_path)
    _refused(store, tmp_path, query, "--allow-write", needles=["--allow-write is gone", "--out FILE"])


@pytest.mark.parametrize("query", ["SELECT count(*) AS n FROM cases", "WITH a AS (FROM runs) SELECT count(*) AS n FROM a",
                                   "DESCRIBE cases", "SUMMARIZE runs", "EXPLAIN SELECT * FROM cases", "FROM runs"])
def test_sql_reads(store, query):
    assert ok("sql", query, "-w", str(store), "--format", "json").stdout.startswith("[")


# ---------------------------------------------------------------------------- 5. a damaged file is isolated
@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Path:
    """good1, good2 intact; corrupt (garbage case file), empty (0-byte case file), missing (no partition)."""
    wh = tmp_path_factory.mktemp("damaged") / "wh"
    for rid in ("good1", "corrupt", "empty", "missing", "good2"):
        ingest(wh, rid)
    part = lambda rid: wh / "cases" / ("run_id=" + rid) / "part-00000.parquet"   # noqa: E731
    part("corrupt").write_bytes(b"PAR1" + b"\x00garbage" * 100 + b"PAR1")
    part("empty").write_bytes(b"")
    for path in sorted(part("missing").parent.iterdir()):
        path.unlink()
    part("missing").parent.rmdir()
    return wh


BROKEN = {"corrupt": "part-00000.parquet", "empty": "part-00000.parquet", "missing": "run_id=missing"}


@pytest.mark.slow
def test_runs_and_sql_read_the_healthy_runs_and_name_the_damaged(damaged):
    before = snapshot_tree(damaged)
    listed = invoke("runs", "-w", str(damaged), "--format", "json")
    assert listed.exit_code == 0 and "Traceback" not in listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["good1", "good2"]
    for result in (listed, invoke("sql", "SELECT run_id, count(*) AS n FROM cases GROUP BY 1 ORDER BY 1",
                                  "-w", str(damaged), "--format", "json"), invoke("runs", "-w", str(damaged))):
        warnings = result.stderr.splitlines()
        assert len(warnings) == 3 and all("is damaged and left out" in w for w in warnings), result.stderr
        for rid, needle in BROKEN.items():
            assert any(rid in w and needle in w for w in warnings), (rid, warnings)
    assert json.loads(invoke("sql", "SELECT run_id, count(*) AS n FROM cases GROUP BY 1 ORDER BY 1", "-w",
                             str(damaged), "--format", "json").stdout) == [{"run_id": "good1", "n": 48},
                                                                           {"run_id": "good2", "n": 48}]
    ok("report", "good1", "-w", str(damaged))
    assert snapshot_tree(damaged) == before


@pytest.mark.parametrize("rid", sorted(BROKEN))
def test_report_of_a_damaged_run_names_the_file(damaged, rid):
    one_line_error(invoke("report", rid, "-w", str(damaged)), "run %r is damaged" % rid, BROKEN[rid])
    one_line_error(invoke("diff", "good1", rid, "-w", str(damaged)), "run %r is damaged" % rid)


def test_check_lists_every_problem(damaged, tmp_path):
    result = invoke("check", "-w", str(damaged))
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and "Traceback" not in result.stderr
    for rid, needle in BROKEN.items():
        assert any(("run_id=" + rid) in line and needle in line for line in lines), (rid, lines)
    healthy = tmp_path / "wh"
    ingest(healthy, "a")
    assert invoke("check", "-w", str(healthy)).stdout == "ok: 1 run(s)\n"
    extra = healthy / "cases" / "run_id=a" / "part-00001.parquet"         # rows no commit wrote
    extra.write_bytes((healthy / "cases" / "run_id=a" / "part-00000.parquet").read_bytes())
    result = invoke("check", "-w", str(healthy))
    assert result.exit_code == 1 and "hold 96 record(s)" in result.stdout and "says 48 case(s)" in result.stdout


# ---------------------------------------------------------------------------- 6. bad paths
@pytest.mark.parametrize("command", [["runs"], ["sql", "SELECT 1"], ["report", "x"], ["gc"], ["check"],
                                     ["ingest", str(ANSWERS)]])
def test_a_file_as_warehouse_is_one_line(tmp_path, command):
    path = tmp_path / "afile"
    path.write_text("not a warehouse")
    one_line_error(invoke(*command, "-w", str(path)), "not a directory")
    assert sorted(os.listdir(tmp_path)) == ["afile"] and path.read_text() == "not a warehouse"


@pytest.mark.slow
def test_an_empty_warehouse_path_is_one_line():
    """`-w ""` used to mean the current directory; the real entry point prints one line (a parse error)."""
    before = snapshot_tree(ROOT / "warehouse")
    for command in (["runs"], ["ingest", str(ANSWERS)]):
        proc = cli(*command, "-w", "")
        assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and "the warehouse path is empty" in proc.stderr
    assert snapshot_tree(ROOT / "warehouse") == before


def test_unwritable_warehouse_is_one_line_and_a_failed_ingest_creates_nothing(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    one_line_error(invoke("ingest", str(ANSWERS), "-w", str(blocker / "wh")), "cannot write to warehouse")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"state": "s", "expected": {"q": "a"}, "answers": []}\n')
    one_line_error(invoke("ingest", str(bad), "-w", str(tmp_path / "new" / "deeper" / "wh")))
    one_line_error(invoke("gc", "-w", str(blocker)))
    assert ok("gc", "-w", str(tmp_path / "nowhere")).stdout.endswith("removed 0 staging area(s), 0 orphan partition(s)\n")
    assert sorted(os.listdir(tmp_path)) == ["afile", "bad.jsonl"]


# ---------------------------------------------------------------------------- 7. housekeeping
_DIE_STAGING = textwrap.dedent("""
    import os, sys
    from laya_cases.store.warehouse import Warehouse
    with Warehouse(sys.argv[1]).stage(sys.argv[2]) as staged:
        os._exit(0)                      # a writer killed mid-run: its staging area stays behind
""")

_HOLD_STAGING = textwrap.dedent("""
    import sys
    from laya_cases.store.warehouse import Warehouse
    with Warehouse(sys.argv[1]).stage("alive") as staged:
        print("staged", flush=True)
        sys.stdin.read()                 # a live writer, until the test closes its stdin
""")


def _staging(wh: Path):
    return sorted(p.name for p in (wh / "_staging").iterdir())


def test_next_commit_removes_dead_writers_leftovers_only(tmp_path):
    wh = tmp_path / "wh"
    ingest(wh, "base")
    for rid in ("dead1", "dead2"):
        subprocess.run([sys.executable, "-c", _DIE_STAGING, str(wh), rid], check=True, cwd=str(ROOT))
    live = subprocess.Popen([sys.executable, "-c", _HOLD_STAGING, str(wh)], cwd=str(ROOT), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert live.stdout.readline() == "staged\n"
        foreign = ["notes", "x.123.nothex"]
        for name in foreign:
            (wh / "_staging" / name).mkdir()
        assert len(_staging(wh)) == 5
        ingest(wh, "next")
        left = _staging(wh)
        assert len(left) == 3 and left[0].startswith("alive.") and sorted(left[1:]) == sorted(foreign)
        out = ok("gc", "-w", str(wh)).stdout
        assert out == "removed 0 staging area(s), 0 orphan partition(s)\n"
    finally:
        live.communicate("")
    assert live.returncode == 0


def test_gc_removes_only_what_laya_cases_wrote_and_lists_it(tmp_path):
    wh = tmp_path / "wh"
    ingest(wh, "base")
    subprocess.run([sys.executable, "-c", _DIE_STAGING, str(wh), "dead"], check=True, cwd=str(ROOT))
    dead = wh / "_staging" / _staging(wh)[0]
    orphan = wh / "cases" / "run_id=orphan"
    orphan.mkdir()
    foreign = [wh / "cases" / "notes", wh / "cases" / "run_id=not valid", wh / "cases" / "run_id=..",
               wh / "_staging" / "mine"]
    for path in foreign:
        path.mkdir()
    (wh / "cases" / "README").write_text("mine")
    out = ok("gc", "-w", str(wh)).stdout.splitlines()
    assert out == [str(dead), str(orphan), "removed 1 staging area(s), 1 orphan partition(s)"]
    assert all(p.is_dir() for p in foreign) and (wh / "cases" / "README").exists()
    assert not dead.exists() and not orphan.exists()
    ok("report", "base", "-w", str(wh))


def test_data_files_are_fsynced_before_the_commit_renames(tmp_path, monkeypatch):
    from laya_cases.store import write as store_write
    from laya_cases.record.ingest.answers import ingest as do_ingest
    from laya_cases.store.warehouse import Warehouse

    events = []
    real_fsync, real_rename = store_write.fsync_path, os.rename
    monkeypatch.setattr(store_write, "fsync_path", lambda p: (events.append(("fsync", str(p))), real_fsync(p)))
    monkeypatch.setattr(store_write.os, "rename", lambda a, b: (events.append(("rename", str(a))), real_rename(a, b)))
    do_ingest(Warehouse(tmp_path / "wh"), str(ANSWERS), run_id="synced")
    # the first commit rename (a file's `<name>.tmp` -> `<name>` inside the staging area comes before)
    first_rename = next(i for i, e in enumerate(events) if e[0] == "rename" and not e[1].endswith(".tmp"))
    synced = {path for kind, path in events[:first_rename] if kind == "fsync"}
    for name in ("cases/run_id=synced/part-00000.parquet", "slice_sets/run_id=synced/part-00000.parquet",
                 "runs/run_id=synced/run.parquet"):
        assert any(p.endswith("/" + name) for p in synced), name
    assert any(p.endswith("run_id=synced") for p in synced)       # the directories holding them too


def test_corrupt_pages_behind_a_good_footer(tmp_path):
    """The footer check cannot see a bad page: a query reading it fails with one line, check names the file."""
    wh = tmp_path / "wh"
    ingest(wh, "a")
    part = wh / "cases" / "run_id=a" / "part-00000.parquet"
    data = bytearray(part.read_bytes())
    footer_len = int.from_bytes(data[-8:-4], "little")
    for i in range(4, len(data) - footer_len - 8, 5):                # every page, the footer stays good
        data[i] ^= 0xFF
    part.write_bytes(bytes(data))
    one_line_error(invoke("report", "a", "-w", str(wh)), "cannot read run 'a'", "laya-cases check")
    one_line_error(invoke("sql", "SELECT avg(confidence) FROM cases", "-w", str(wh)), "query failed")
    result = invoke("check", "-w", str(wh))
    assert result.exit_code == 1 and result.stdout.startswith(str(part) + ": unreadable data")


@pytest.mark.slow
def test_a_warehouse_in_the_older_layout_is_read_and_gc_moves_its_slice_sets(tmp_path):
    """Before slice_sets/ had its own tree, a run's slice sets lay beside its run.parquet: such runs read
    as before (report, check), and gc moves the file into slice_sets/, leaving one schema per runs entry."""
    wh = tmp_path / "wh"
    for rid in ("old", "new"):
        ingest(wh, rid)
    expected = ok("report", "old", "-w", str(wh), "--slice", "language").stdout
    legacy = wh / "runs" / "run_id=old" / "slice_sets.parquet"
    os.rename(wh / "slice_sets" / "run_id=old" / "part-00000.parquet", legacy)
    os.rmdir(wh / "slice_sets" / "run_id=old")
    assert ok("report", "old", "-w", str(wh), "--slice", "language").stdout == expected
    assert ok("check", "-w", str(wh)).stdout == "ok: 2 run(s)\n"
    assert ok("gc", "-w", str(wh)).stdout == "removed 0 staging area(s), 0 orphan partition(s)\n"
    assert not legacy.exists() and sorted(os.listdir(wh / "runs" / "run_id=old")) == ["run.parquet"]
    assert (wh / "slice_sets" / "run_id=old" / "part-00000.parquet").is_file()
    assert ok("report", "old", "-w", str(wh), "--slice", "language").stdout == expected
    assert ok("check", "-w", str(wh)).stdout == "ok: 2 run(s)\n"
