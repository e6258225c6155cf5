"""The README's tour is produced by running it: every `console` block, in order, in one fresh directory
(how a block reads and compares: tests/docs_blocks.py)."""
from __future__ import annotations

import re

import pytest

from docs_blocks import console_blocks, matches, run_console
from helpers import ROOT

README = ROOT / "README.md"


def test_the_matcher_can_fail():
    assert matches(["a", "...", "c"], ["a", "b", "b", "c"]) and matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "c"], ["a", "b"]) and not matches(["a"], ["a", "b"])
    assert matches(["latency_p50_ms  9.8787   16"], ["latency_p50_ms    123.4567   16"])
    assert not matches(["choice_accuracy 0.6875"], ["choice_accuracy 0.6876"])
    assert matches(["minilm  11-29 14:53  onnx"], ["minilm  12-02 19:06  onnx"])


def _section(title: str) -> str:
    return README.read_text(encoding="utf-8").split("\n## %s\n" % title, 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow
def test_the_readme_tour_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    """Runs the real default model, the ONNX export and its INT8 copy, as the README does; then the
    Python section on the store the tour made, whose per-language numbers must be the report's."""
    tour = _section("A five-minute tour")
    blocks = console_blocks(tour)
    assert len(blocks) == 5 and sum(len(b) for b in blocks) == 8
    run_console(tour, tmp_path)
    monkeypatch.chdir(tmp_path)
    (python,) = re.findall(r"```python\n(.*?)```", _section("Python"), re.S)
    namespace: dict = {}
    exec(compile(python, "README.md (Python)", "exec"), namespace)     # noqa: S102
    capsys.readouterr()
    by_language = {row["language_key"]: row["choice_accuracy"] for row in namespace["choice"].group_by(
        "language_key").agg(choice_accuracy=namespace["pl"].col("correct").mean()).collect().to_dicts()}
    report = namespace["wh"].report("minilm", slices=["language"])
    assert by_language == {k: v["choice_accuracy"] for k, v in report["slices"]["language"].items()}
    assert namespace["report"]["overall"]["choice_accuracy"] == report["overall"]["choice_accuracy"] == 0.6875
