"""A warehouse on object storage (issue 14 item 3; laya_cases/objstore, docs/scale.md "Object storage").

A local S3-compatible server (moto in server mode, in this process's threads) stands in for S3; writers
are real `laya-cases` processes. Each test uses its own bucket. Waiting polls a condition under a
generous deadline; no test asserts on durations.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("deltalake", reason="needs the objstore extra: pip install -e '.[objstore]'")
pytest.importorskip("flask", reason="moto's S3 server needs flask: pip install -e '.[dev]'")
moto_server = pytest.importorskip("moto.server", reason="needs moto[s3] (the dev extra)")

import handshake  # noqa: E402
from helpers import ROOT, WAIT_DEADLINE_S, cli, end_spark, wait_for  # noqa: E402
from laya_cases.query.sql import connect

SUPPORT = ROOT / "data" / "support.jsonl"
SUPPORT_ANSWERS = ROOT / "data" / "support.answers.jsonl"
DOC = ROOT / "docs" / "readers.md"
_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
         "AWS_ALLOW_HTTP": "true"}           # the readers (deltalake, polars) need it for an http:// endpoint


# ---------------------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def endpoint():
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)        # one line per request otherwise
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield "http://%s:%d" % (host, port)
    server.stop()


@pytest.fixture()
def s3(endpoint, monkeypatch, request) -> Dict[str, str]:
    """A fresh bucket; the AWS_* variables that reach it, set here too (the readers read them)."""
    import boto3

    env = dict(_KEYS, AWS_ENDPOINT_URL=endpoint)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    bucket = "b%d" % (abs(hash(request.node.nodeid)) % 10 ** 9)
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                 region_name="us-east-1").create_bucket(Bucket=bucket)
    return dict(env, url="s3://%s/wh" % bucket, bucket=bucket)


def env_of(s3: Dict[str, str], **more: str) -> Dict[str, str]:
    return dict({k: v for k, v in s3.items() if k.startswith("AWS_")}, **more)


def write_answers(path: Path, n_rows: int, *, qids: int = 1, flip: int = 0) -> Path:
    """n_rows recorded-answer rows with `qids` choice questions each (n_cases = n_rows * qids)."""
    names = ["q%d" % j for j in range(qids)]
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n_rows):
            pick = "a" if (i + flip) % 3 else "b"
            answers = {q: {"type": "choice", "choice": pick, "answer_confidence": (i % 97) / 97.0} for q in names}
            handle.write(json.dumps({
                "state": "s%d" % i,
                "questions": {q: {"type": "choice", "instructions": "pick", "criteria": ["a", "b"]} for q in names},
                "expected": {q: "a" for q in names}, "answers": answers}) + "\n")
    return path


def popen(*args: str, env: Dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "laya_cases_cli", *args], cwd=str(ROOT), text=True,
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def runs_json(url: str, s3: Dict[str, str]) -> List[Dict[str, object]]:
    return json.loads(cli("runs", "-w", url, "--format", "json", env=env_of(s3), check=True).stdout)


def doc_block(name: str, url: str) -> str:
    """A block of docs/readers.md ("# objstore: <name>"), as written, reading `url`."""
    found = dict(re.findall(r"```python\n# objstore: ([\w, ]+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S))
    code = found[name]
    assert code.count("\nurl = ") == 1
    return re.sub(r"\nurl = .*\n", "\nurl = %r\n" % url, code)


def reader_counts(url: str) -> Dict[str, Dict[str, int]]:
    """Cases per run as each documented reader (docs/readers.md) sees them."""
    import duckdb

    namespace: Dict[str, object] = {}
    exec(compile(doc_block("duckdb, polars", url), "docs/readers.md (objstore)", "exec"), namespace)  # noqa: S102
    by_duckdb, by_polars = namespace["by_duckdb"], namespace["by_polars"]
    return {
        "duckdb": dict(duckdb.sql("SELECT run_id, count(*) FROM by_duckdb GROUP BY ALL").fetchall()),
        "polars": dict(by_polars.group_by("run_id").len().collect().iter_rows()),
    }


def local_report(tmp_path: Path, answers: Path, run_id: str, *extra: str) -> str:
    local = tmp_path / "local"
    if not (local / "runs" / ("run_id=" + run_id)).is_dir():
        cli("ingest", str(answers), "-w", str(local), "--run-id", run_id, *extra, check=True)
    return cli("report", run_id, "-w", str(local), check=True).stdout


# ---------------------------------------------------------------------------- tests
def test_url_spellings_name_one_warehouse_and_bad_ones_are_one_line(tmp_path):
    from laya_cases.core.errors import UsageError
    from laya_cases.store.delta.url import is_url, parse, storage_options
    from laya_cases.store.warehouse import Warehouse

    assert parse("s3://bkt/a/b/").base == parse("s3:/bkt/a/b").base == "s3://bkt/a/b"      # as Path folds it
    assert parse("S3A://bkt/x").base == "s3://bkt/x"
    assert parse("delta+file:///tmp/w").base == parse("delta+file:/tmp/w").base == "file:///tmp/w"
    assert parse("delta+file:/tmp/w").name == "delta+file:///tmp/w" and parse("s3:/b/p").name == "s3://b/p"
    assert not is_url(str(tmp_path)) and not is_url("warehouse") and type(Warehouse(tmp_path)) is Warehouse
    assert type(Warehouse("s3://bkt/wh")).__name__ == "DeltaWarehouse"
    for bad in ("s3://", "s3:///", "delta+file://"):
        with pytest.raises(UsageError):
            parse(bad)
    opts = storage_options({"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_DEFAULT_REGION": "eu-west-1", "HOME": "/"})
    assert opts == {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_REGION": "eu-west-1", "AWS_ALLOW_HTTP": "true"}
    assert "AWS_ALLOW_HTTP" not in storage_options({"AWS_ENDPOINT_URL": "https://s3.example"})


@pytest.mark.slow   # CLI runs, moto S3
def test_ingest_report_sql_on_s3_equal_the_local_warehouse(s3, tmp_path):
    """One run through the CLI: runs, report (byte for byte the local warehouse's), sql, errors."""
    url = s3["url"]
    env = env_of(s3)
    out = cli("ingest", str(SUPPORT_ANSWERS), "--dataset", str(SUPPORT), "-w", url, "--run-id", "r1", env=env,
              check=True)
    assert out.stdout.strip() == "r1"
    assert [r["run_id"] for r in runs_json(url, s3)] == ["r1"]
    report = cli("report", "r1", "-w", url, env=env, check=True).stdout
    assert report == local_report(tmp_path, SUPPORT_ANSWERS, "r1", "--dataset", str(SUPPORT))
    sql = cli("sql", "SELECT run_id, count(*) AS n FROM cases GROUP BY ALL", "-w", url, "--format", "csv", env=env,
              check=True)
    assert sql.stdout.splitlines() == ["run_id,n", "r1,48"]
    again = cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "r1", env=env)
    assert again.returncode == 2 and again.stderr.strip().endswith("run id 'r1' already exists in warehouse %s" % url)
    unknown = cli("report", "nope", "-w", url, env=env)
    assert unknown.returncode == 2 and "unknown run id 'nope'" in unknown.stderr and "known runs: r1" in unknown.stderr
    check = cli("check", "-w", url, env=env)         # reads a directory's files: refused in one line
    assert check.returncode == 2 and len(check.stderr.strip().splitlines()) == 1, check.stderr


@pytest.mark.slow
def test_tables_are_read_through_arrows_own_file_systems(s3, tmp_path):
    """The datasets of the runs and cases tables use Arrow's S3 / local file system, not the Python one
    deltalake builds by default: an Arrow I/O thread inside a Python file system at interpreter exit ends
    the process with SIGABRT (laya_cases/store/delta/tables.py arrow_filesystem)."""
    import pyarrow.fs as pafs

    from laya_cases.store.delta import tables as delta
    from laya_cases.store.delta.url import parse

    local = "delta+file://%s" % (tmp_path / "dw")
    for url, env in ((s3["url"], env_of(s3)), (local, None)):
        cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "r1", env=env, check=True)
        loc = parse(url)
        writer = delta.runs(loc)["writer_id"][0].as_py()
        assert delta.runs(loc, ["r1"]).num_rows == 1
        dataset = delta.committed(loc, "cases", [("r1", writer)])
        assert dataset.count_rows() == 48
        inner = dataset.filesystem
        assert isinstance(inner, pafs.SubTreeFileSystem), inner
        assert isinstance(inner.base_fs, pafs.S3FileSystem if url.startswith("s3") else pafs.LocalFileSystem)


@pytest.mark.slow
def test_local_delta_warehouse_round_trips(tmp_path):
    """delta+file:// keeps the same tables on a local path; its report equals the directory warehouse's."""
    url = "delta+file://%s" % (tmp_path / "dw")
    cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "d1", check=True)
    assert cli("report", "d1", "-w", url, check=True).stdout == local_report(tmp_path, SUPPORT_ANSWERS, "d1")
    assert sorted(p.name for p in (tmp_path / "dw").iterdir()) == ["cases", "runs", "slice_sets"]
    assert reader_counts("file://%s" % (tmp_path / "dw")) == {"duckdb": {"d1": 48}, "polars": {"d1": 48}}
    from deltalake import DeltaTable

    cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "d2", check=True)
    runs = DeltaTable("file://%s/runs" % (tmp_path / "dw"))
    assert len(runs.file_uris()) == 2                          # one file of one row per run
    out = cli("gc", "-w", url, check=True).stdout               # compacts runs; vacuum keeps files < 7 days old
    assert out.splitlines()[-1] == "removed 0 staging area(s), 0 orphan partition(s)"
    assert len(DeltaTable("file://%s/runs" % (tmp_path / "dw")).file_uris()) == 1
    assert [r["run_id"] for r in json.loads(cli("runs", "-w", url, "--format", "json", check=True).stdout)] == ["d1", "d2"]
    assert cli("report", "d1", "-w", url, check=True).stdout == local_report(tmp_path, SUPPORT_ANSWERS, "d1")


@pytest.mark.slow
def test_run_with_chunk_commits_on_a_delta_warehouse_equals_the_local_run(tmp_path):
    """`run` (a scripted runner double, a chunk due after every row) commits whole on a Delta warehouse:
    the same rows and report as a local run; there is no incomplete run to --resume."""
    from doubles import ExplodingRunnerDouble, FakeClock
    from laya_cases.core.errors import UsageError
    from laya_cases.report import build as R
    from laya_cases.run.execute import execute
    from laya_cases.run.options import RunOptions
    from laya_cases.store.warehouse import Warehouse

    data = ROOT / "tests" / "fixtures" / "spec" / "ds_batch.jsonl"
    docs, rows = [], []
    for wh in (Warehouse("delta+file://%s" % (tmp_path / "dw")), Warehouse(tmp_path / "lw")):
        opts = RunOptions(str(data), batch_size=2, on_error="skip", run_id="r", commit_every=1)
        clock = FakeClock()
        execute(wh, opts, runner=ExplodingRunnerDouble(clock=clock), clock=clock)
        doc = R.build(connect(wh, ["r"]), "r", R.Options())
        doc.pop("run", None)
        docs.append(doc)
        rows.append(connect(wh, ["r"]).execute("SELECT * EXCLUDE (run_id) FROM decisions ORDER BY row_index, qid")
                    .fetchall())
        assert wh.run_ids() == ["r"]
    assert docs[0] == docs[1] and rows[0] == rows[1] and len(rows[0]) > 0
    with pytest.raises(UsageError, match="cannot resume run .r2.: no incomplete run"):
        execute(Warehouse("delta+file://%s" % (tmp_path / "dw")),
                RunOptions(str(data), run_id="r2", resume=True), runner=ExplodingRunnerDouble())


@pytest.mark.slow   # 8 writers, ~50 s
def test_eight_concurrent_writers_into_s3_all_land(s3, tmp_path):
    """8 ingest processes at once into one bucket: every run lands whole, each report equals the local
    warehouse's report of the same answers, and the documented readers count every case."""
    url = s3["url"]
    files = [write_answers(tmp_path / ("a%d.jsonl" % i), 30 + 7 * i, qids=1 + i % 3, flip=i) for i in range(8)]
    expected = {"run-%d" % i: (30 + 7 * i) * (1 + i % 3) for i in range(8)}
    procs = [popen("ingest", str(f), "-w", url, "--run-id", "run-%d" % i, env=env_of(s3)) for i, f in enumerate(files)]
    results = [p.communicate(timeout=WAIT_DEADLINE_S) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err[-500:] for _, err in results]
    assert [out.strip() for out, _ in results] == sorted(expected)

    listed = {r["run_id"]: r["n_cases"] for r in runs_json(url, s3)}
    assert listed == expected
    assert reader_counts(url) == {"duckdb": expected, "polars": expected}
    from deltalake import DeltaTable
    assert DeltaTable(url + "/runs").version() >= 8          # one commit of the runs table per writer
    for i in (0, 5):                                         # two CLI reports; all eight in process below
        got = cli("report", "run-%d" % i, "-w", url, env=env_of(s3), check=True).stdout
        assert got == local_report(tmp_path, files[i], "run-%d" % i)
    _same_reports_in_process(url, tmp_path / "local", files, sorted(expected))


def _same_reports_in_process(url: str, local: Path, files: List[Path], run_ids: List[str]) -> None:
    from laya_cases.report import build as R
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    remote, here = Warehouse(url), Warehouse(local)
    for rid, path in zip(run_ids, files):
        if not here.has_run(rid):
            ingest(here, str(path), run_id=rid)
        docs = [R.build(connect(wh, [rid]), rid, R.Options()) for wh in (remote, here)]
        for doc in docs:
            doc.pop("run", None)                 # created_at differs; the metrics must not
        assert docs[0] == docs[1], rid


_TORN = """
import os, signal, sys
from laya_cases.store.delta import tables as delta
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)      # after the cases and slice sets commits, before the runs row
delta.commit_runs_row = die
sys.argv = ["laya-cases"] + sys.argv[1:]
from laya_cases_cli.app import main
main()
"""


@pytest.mark.slow   # kill -9 twice, ~35 s
def test_killed_writers_leave_nothing_visible(s3, tmp_path):
    """kill -9 while staging, and kill -9 between the table commits (cases and slice sets in, runs row
    not): laya-cases and the documented readers see exactly the committed run; reports are unchanged."""
    from deltalake import DeltaTable

    url, env = s3["url"], env_of(s3)
    cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "base", env=env, check=True)
    before = cli("report", "base", "-w", url, env=env, check=True).stdout

    staging = tmp_path / "tmp"
    staging.mkdir()
    big = write_answers(tmp_path / "big.jsonl", 200_000)
    proc = popen("ingest", str(big), "-w", url, "--run-id", "killed", env=dict(env, TMPDIR=str(staging)))
    try:
        wait_for(lambda: any(p.stat().st_size for p in staging.rglob("*.parquet.tmp")), proc, "rows staged")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    torn = subprocess.run([sys.executable, "-c", _TORN, "ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id",
                           "torn"], cwd=str(ROOT), env={**os.environ, **env}, capture_output=True, text=True)
    assert torn.returncode == -signal.SIGKILL, torn.stderr
    raw = DeltaTable(url + "/cases").to_pyarrow_table().column("run_id").to_pylist()
    assert raw.count("torn") == 48 and "killed" not in raw      # the torn writer's cases are in the table

    assert [r["run_id"] for r in runs_json(url, s3)] == ["base"]
    assert reader_counts(url) == {"duckdb": {"base": 48}, "polars": {"base": 48}}
    assert cli("report", "base", "-w", url, env=env, check=True).stdout == before
    for rid in ("killed", "torn"):
        gone = cli("report", rid, "-w", url, env=env)
        assert gone.returncode == 2 and "unknown run id %r" % rid in gone.stderr
    # neither id was taken: both commit now, and the torn writer's rows stay out of the new run
    cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "torn", env=env, check=True)
    assert {r["run_id"]: r["n_cases"] for r in runs_json(url, s3)} == {"base": 48, "torn": 48}
    assert reader_counts(url)["duckdb"] == {"base": 48, "torn": 48}
    sql = cli("sql", "SELECT count(*) FROM cases WHERE run_id = 'torn'", "-w", url, "--format", "csv", env=env,
              check=True)
    assert sql.stdout.splitlines()[-1] == "48"


_MEET = """
import sys
sys.path.insert(0, "tests")
import handshake
from laya_cases.store.delta import tables as delta
arrived, go = sys.argv.pop(1), sys.argv.pop(1)
commit = delta.commit_runs_row
def wait_then_commit(*args, **kwargs):        # both writers' cases are in before either commits its runs row
    handshake.post(arrived)
    handshake.take(go)
    return commit(*args, **kwargs)
delta.commit_runs_row = wait_then_commit
sys.argv = ["laya-cases"] + sys.argv[1:]
from laya_cases_cli.app import main
main()
"""


@pytest.mark.slow
def test_two_writers_of_one_run_id_exactly_one_wins(s3, tmp_path):
    """Both pass the early check, commit their cases and meet at the runs table (tests/handshake.py): one
    runs row goes in, the other writer exits 2 with one line, and the run's rows are the winner's only."""
    url, env = s3["url"], env_of(s3)
    files = [write_answers(tmp_path / "a.jsonl", 30), write_answers(tmp_path / "b.jsonl", 50, qids=2)]
    with handshake.Pipes(tmp_path / "meet", "arrived", "go") as pipes:
        procs = [subprocess.Popen([sys.executable, "-c", _MEET, pipes.path("arrived"), pipes.path("go"), "ingest",
                                   str(f), "-w", url, "--run-id", "dup"], cwd=str(ROOT), env={**os.environ, **env},
                                  text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in files]
        try:
            pipes.wait("arrived", 2, procs, "both writers at the runs table")
            pipes.post("go", 2)
            results = [p.communicate(timeout=WAIT_DEADLINE_S) for p in procs]
        finally:
            for p in procs:
                p.kill()
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 2], [err[-500:] for _, err in results]
    loser = results[codes.index(2)][1]
    assert "another writer committed it first" in loser and len(loser.strip().splitlines()) == 1
    runs = runs_json(url, s3)
    assert [r["run_id"] for r in runs] == ["dup"]
    n = [30, 100][codes.index(0)]                 # the winner's cases
    assert runs[0]["n_cases"] == n and reader_counts(url) == {"duckdb": {"dup": n}, "polars": {"dup": n}}
    sql = cli("sql", "SELECT count(*) FROM cases", "-w", url, "--format", "csv", env=env, check=True)
    assert sql.stdout.splitlines()[-1] == str(n)


@pytest.mark.slow   # a Spark JVM, ~40 s
def test_spark_reads_the_committed_files(tmp_path):
    """docs/readers.md's Spark line on a local Delta warehouse (S3 needs hadoop-aws on Spark's classpath):
    the committed runs, without the cases of a writer killed before its runs row."""
    pytest.importorskip("pyspark", reason="needs the spark extra")
    from pyspark.sql import SparkSession

    url = "delta+file://%s" % (tmp_path / "dw")
    for rid in ("s1", "s2"):
        cli("ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", rid, check=True)
    torn = subprocess.run([sys.executable, "-c", _TORN, "ingest", str(SUPPORT_ANSWERS), "-w", url, "--run-id", "torn"],
                          cwd=str(ROOT), capture_output=True, text=True)
    assert torn.returncode == -signal.SIGKILL and (tmp_path / "dw" / "cases" / "run_id=torn").is_dir()
    # the documented block's getOrCreate finds this local[1] session
    SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    namespace: Dict[str, object] = {}
    try:
        exec(compile(doc_block("spark", "file://%s" % (tmp_path / "dw")), "docs/readers.md (spark)", "exec"),  # noqa: S102
             namespace)
        got = {r["run_id"]: r["count"] for r in namespace["by_spark"].groupBy("run_id").count().collect()}
    finally:
        end_spark()
    assert got == {"s1": 48, "s2": 48}


@pytest.mark.slow
def test_the_notebooks_cases_frame_is_the_stores_on_delta_and_on_a_directory(tmp_path):
    """`Store.cases` asks the store for the frame (store/ owns every read under the root): a Delta warehouse
    gives the local one's cases, row for row (it was refused as local-only before)."""
    import laya_cases as lc

    url = "delta+file://%s" % (tmp_path / "dw")
    for where in (url, str(tmp_path / "lw")):
        cli("ingest", str(SUPPORT_ANSWERS), "-w", where, "--run-id", "r1", check=True)
    frames = [lc.open(where).cases("r1").sort("case_id") for where in (url, str(tmp_path / "lw"))]
    assert frames[0].height == 48 and frames[0].equals(frames[1])
    assert lc.open(url).cases("r1", lazy=True).select("run_id").unique().collect()["run_id"].to_list() == ["r1"]
