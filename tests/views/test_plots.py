"""`laya-cases plot`: the reliability diagram and risk-coverage curve are PNGs drawn from the report's numbers."""
from __future__ import annotations

import pytest

from helpers import cli, fixture_rows, write_jsonl
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse


def _store(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, str(write_jsonl(tmp_path / "a.jsonl", fixture_rows("ties.json"))), run_id="ties")
    return str(wh.root)


@pytest.mark.slow
def test_plot_writes_two_pngs_reproducibly(tmp_path):
    wh = _store(tmp_path)
    first = cli("plot", "ties", "-w", wh, "--out", str(tmp_path / "a"), check=True)
    assert first.stdout.split() == [str(tmp_path / "a" / "reliability.png"), str(tmp_path / "a" / "risk_coverage.png")]
    cli("plot", "ties", "-w", wh, "--out", str(tmp_path / "b"), "--by", "language", check=True)
    cli("plot", "ties", "-w", wh, "--out", str(tmp_path / "c"), check=True)
    for name in ("reliability.png", "risk_coverage.png"):
        data = (tmp_path / "a" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert data == (tmp_path / "c" / name).read_bytes()          # byte-identical for a fixed run
    assert (tmp_path / "a" / "reliability.png").read_bytes() != (tmp_path / "b" / "reliability.png").read_bytes()


@pytest.mark.slow
def test_plot_usage_errors(tmp_path):
    wh = _store(tmp_path)
    for args, needle in ((("nope",), "unknown run id"), (("ties", "--by", "colour"), "--by must be one of")):
        proc = cli("plot", *args, "-w", wh, "--out", str(tmp_path / "p"))
        assert proc.returncode == 2 and proc.stderr.startswith("laya-cases: ") and needle in proc.stderr
        assert len(proc.stderr.splitlines()) == 1
