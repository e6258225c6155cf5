"""Warehouse URLs are checked before anything is read or written (laya_cases/store/delta/url.py check_warehouse).

Generated: every unsupported or malformed form (other schemes, file://, delta+s3://, a query string or
fragment, a bucket without a prefix, a Delta path that is a file or under /dev, /proc, /sys) given to a
reader and to a writer, by -w, by $LAYA_CASES_WAREHOUSE and to `lc.open`: exit 2, exactly one stderr line
naming the URL, no traceback, nothing created. A bad AWS_ENDPOINT_URL is one line too, not a Rust panic.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

from helpers import ROOT
from test_bad_input import run_cli

ANSWERS = str(ROOT / "data" / "support.answers.jsonl")
BAD = ["http://x/y", "https://host/wh", "file:///some/dir", "file:relative", "gs://bucket/x", "gcs://b/x",
       "az://c/x", "abfss://c@a.dfs.core.windows.net/x", "hdfs://nn/x", "ftp://h/x", "delta+s3://b/x",
       "delta+gs://b/x", "s3://evals/q?x=1", "s3://evals/q#frag", "s3://bucket", "s3://bucket/", "s3://", "s3:///",
       "s3a://", "delta+file://", "delta+file:///etc/hostname", "delta+file:///dev/null", "delta+file:///proc/x",
       "delta+file:///sys/kernel", "delta+file:///tmp/laya-cases-url-test?x=1", "delta+file:///tmp/a#b",
       "weird+scheme://x/y"]
COMMANDS = {"runs": ["runs"], "report": ["report", "x"], "sql": ["sql", "SELECT 1"],
            "ingest": ["ingest", ANSWERS, "--run-id", "u"]}


def _listing(root: Path) -> List[str]:
    return sorted(str(p) for p in root.rglob("*"))


@pytest.mark.parametrize("command", [c if c == "runs" else pytest.param(c, marks=pytest.mark.slow)   # 27 URLs each
                                     for c in sorted(COMMANDS)])
@pytest.mark.parametrize("url", BAD)
def test_a_bad_warehouse_url_is_one_line_before_anything_happens(tmp_path, monkeypatch, url, command):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LAYA_CASES_WAREHOUSE", raising=False)
    code, out, err = run_cli(*COMMANDS[command], "-w", url)
    assert code == 2 and out == "", (url, command, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya-cases: ") and "Traceback" not in err, lines
    assert url in lines[0] or "warehouse" in lines[0]
    assert _listing(tmp_path) == [] and not os.path.exists("/tmp/laya-cases-url-test")


@pytest.mark.parametrize("url", BAD[:8] + ["s3://evals/q?x=1"])
def test_the_environment_variable_is_checked_the_same_way(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LAYA_CASES_WAREHOUSE", url)
    code, out, err = run_cli("runs")
    assert code == 2 and len(err.splitlines()) == 1 and "LAYA_CASES_WAREHOUSE" in err


@pytest.mark.parametrize("url", BAD)
def test_lc_open_refuses_the_same_urls(url):
    import laya_cases as lc

    if url in ("s3://", "s3:///", "s3a://", "delta+file://"):
        pytest.skip("Path() folds these to a local name only the CLI sees whole")
    with pytest.raises(lc.UsageError):
        lc.open(url)


@pytest.mark.parametrize("endpoint", ["not-a-url", "localhost:9000", "ftp://h", "http://", "s3://bucket"])
@pytest.mark.parametrize("command", ["runs", "ingest"])
def test_a_bad_endpoint_is_one_line(tmp_path, monkeypatch, endpoint, command):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    code, out, err = run_cli(*COMMANDS[command], "-w", "s3://bucket/wh")
    assert code == 2 and err.splitlines() == [
        "laya-cases: AWS_ENDPOINT_URL %r is not an http(s) URL with a host (e.g. http://127.0.0.1:9000)" % endpoint]


@pytest.mark.parametrize("good", ["warehouse", "a:b", "./s3", "my-wh", "delta+file:///tmp/{tmp}/d", "s3://bucket/wh"])
def test_good_names_pass_the_check(tmp_path, good):
    from laya_cases.store.delta.url import check_warehouse

    check_warehouse(good.format(tmp=tmp_path.name))
