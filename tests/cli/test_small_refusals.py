"""Issue 27, items 7 and 8: tracebacks and silent acceptances that became one line, exit 2, nothing written.

JSON nested 5,000 levels deep in a relevance manifest, a presentation states file and an imported
document; `dataset from-hf --out` naming a directory; `serve --host ""`; `shortlist --group-size` below 2
(with or without --tournament); a shard spec in non-ASCII digits.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT
from test_bad_input import run_cli

SUPPORT = str(ROOT / "data" / "support.jsonl")


@pytest.fixture()
def deep(tmp_path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text("[" * 5000 + "]" * 5000 + "\n")
    return path


@pytest.mark.parametrize("args", [
    ["relevance", "languages", "--manifest", "{deep}"],
    ["relevance", "run", "--manifest", "{deep}", "--model", "minilm"],
    ["presentation", "--states", "{deep}", "--model", "minilm"],
    ["import", "{deep}"],
], ids=["relevance-languages", "relevance-run", "presentation-states", "import"])
def test_json_nested_too_deep_is_one_line(tmp_path, deep, args):
    warehouse = [] if args[:2] == ["relevance", "languages"] else ["-w", str(tmp_path / "wh")]
    code, out, err = run_cli(*[a.format(deep=deep) for a in args], *warehouse)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert str(deep) in err and not (tmp_path / "wh").exists()


@pytest.mark.parametrize("out", [".", "{tmp}"])
def test_from_hf_out_a_directory_is_one_line(tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text('{"text": "a", "label": "x"}\n')
    code, _, err = run_cli("dataset", "from-hf", "d.jsonl", "--state", "text", "--label", "label",
                           "--out", out.format(tmp=tmp_path))
    lines = err.splitlines()                   # refused by the output check, before the dataset is read
    assert code == 2 and len(lines) == 1 and lines[0].startswith("laya-cases: --out %s " % out.format(tmp=tmp_path))
    assert "is a directory; name a file" in lines[0] or "above the warehouse" in lines[0]


@pytest.mark.parametrize("host", ["", "   "])
def test_serve_with_an_empty_host_is_refused(tmp_path, host):
    code, _, err = run_cli("serve", "-w", str(tmp_path), "--host", host)
    assert code == 2 and err == "laya-cases: --host is empty: give an address (127.0.0.1, the default, is this " \
                                "machine only)\n"


@pytest.mark.parametrize("size", ["0", "1", "-5"])
@pytest.mark.parametrize("tournament", [[], ["--tournament"]], ids=["top-k", "tournament"])
def test_shortlist_group_size_below_two_is_refused(tmp_path, size, tournament):
    code, _, err = run_cli("shortlist", SUPPORT, "--model", "minilm", "--group-size", size, *tournament,
                           "-w", str(tmp_path / "wh"))
    assert code == 2 and "--group-size must be an integer >= 2, got %s" % size in err
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("spec", ["１/２", "1/٢", "²/3", "1/0", "0/2", "3/2", "1/10000", "a/b"])
def test_a_shard_spec_is_ascii_digits_in_range(tmp_path, spec):
    code, _, err = run_cli("run", SUPPORT, "--shard", spec, "--run-id", "s", "-w", str(tmp_path / "wh"))
    assert code == 2 and "--shard" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "wh").exists()
