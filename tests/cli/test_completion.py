"""Shell completion (`laya-cases --install-completion`): run ids from the store, the values an option lists
in --help, slice dimensions, plot kinds and runner names (laya_cases_cli/completion.py), asked the way the
shell asks: COMP_WORDS / COMP_CWORD and `_LAYA_CASES_COMPLETE=complete_bash`."""
from __future__ import annotations

from typing import List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT
from laya_cases.report.build import DIMENSIONS
from laya_cases.runners import registry
from laya_cases.views.plot_kinds import KINDS
from laya_cases_cli.app import app


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    root = tmp_path_factory.mktemp("complete") / "wh"
    for run in ("demo", "demo-2", "other"):
        result = CliRunner().invoke(app, ["ingest", str(ROOT / "data" / "support.answers.jsonl"), "--dataset",
                                          str(ROOT / "data" / "support.jsonl"), "-w", str(root), "--run-id", run])
        assert result.exit_code == 0, result.output
    return root


def complete(line: str, env=None) -> List[str]:
    """What the shell is offered for the last word of `line` (a trailing space: a new word)."""
    words = line.split(" ")
    environ = dict(env or {}, COMP_WORDS=line, COMP_CWORD=str(len(words) - 1), _LAYA_CASES_COMPLETE="complete_bash")
    with CliRunner().isolation(env=environ) as streams:
        with pytest.raises(SystemExit) as done:
            app.click().main([], prog_name="laya-cases")
        printed = streams[0].getvalue().decode("utf-8")
    assert done.value.code == 0, printed
    return printed.split()


def test_run_ids_come_from_the_store(wh):
    env = {"LAYA_CASES_WAREHOUSE": str(wh)}
    assert complete("laya-cases report ", env) == ["demo", "demo-2", "other"]
    assert complete("laya-cases report de", env) == ["demo", "demo-2"]
    assert complete("laya-cases diff demo ", env) == ["demo", "demo-2", "other"]
    assert complete("laya-cases rank demo other d", env) == ["demo", "demo-2"]       # RUN...: every word
    assert complete("laya-cases report -w %s o" % wh) == ["other"]          # -w on the line wins
    assert complete("laya-cases robustness --run ", env) == ["demo", "demo-2", "other"]
    assert complete("laya-cases calibrate --fit demo --apply o", env) == ["other"]
    assert complete("laya-cases report ", {"LAYA_CASES_WAREHOUSE": str(wh.parent / "nowhere")}) == []


@pytest.mark.parametrize("line,expected", [
    ("laya-cases report demo --view ", ["text", "table"]),
    ("laya-cases report demo --engine s", ["spark"]),
    ("laya-cases run data.jsonl --on-error ", ["fail", "skip"]),
    ("laya-cases sql q --format ", ["table", "csv", "json", "parquet"]),
    ("laya-cases runs --format c", ["csv"]),
    ("laya-cases report demo --slice ", list(DIMENSIONS)),
    ("laya-cases diff a b --by ", list(DIMENSIONS)),
    ("laya-cases rank a b --by ", list(DIMENSIONS)),
    ("laya-cases plot demo --kind ", list(KINDS)),
    ("laya-cases crosslingual demo --by ", ["language", "item"]),
])
def test_choices_are_the_values_help_lists(line, expected):
    assert complete(line) == expected


def test_models_and_runners_complete_the_registered_names():
    assert complete("laya-cases run data.jsonl --model ") == registry.names()
    assert complete("laya-cases run data.jsonl --runner hf-") == [n for n in registry.names() if n.startswith("hf-")]
    assert "minilm" in registry.names()
