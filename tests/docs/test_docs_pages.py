"""Every console block of docs/*.md is produced by running it, as the README's tour is
(tests/docs/test_docs_console.py; how a block reads and compares: tests/docs_blocks.py).

A page runs in a fresh folder whose `../shared` is the stored data. Pages that use another page's runs
run after it in one folder: presentation.md builds nothing the others need, but `ckpt/` (the test
checkpoint, tests/laya_checkpoint.py) serves it and shortlist.md's tournament; robustness.md and
shortlist.md make the runs `rob-en` and `b77` that plots.md draws. What a page assumes without making
it, the page says and the setup here makes: `./saved` and `reviews.csv` (datasets.md), `ckpt/`, and
the policy file robustness.md shows.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict

import pytest

from docs_blocks import run_console
from helpers import ROOT, SHARED, needs_shared_data

#: Each page with console blocks, and the test that runs them.
RUN_BY = {
    "README.md": "tests/docs/test_docs_console.py",
    "docs/python.md": "tests/api/test_api.py",
    "docs/datasets.md": "tests/docs/test_docs_pages.py",
    "docs/presentation.md": "tests/docs/test_docs_pages.py",
    "docs/robustness.md": "tests/docs/test_docs_pages.py",
    "docs/shortlist.md": "tests/docs/test_docs_pages.py",
    "docs/plots.md": "tests/docs/test_docs_pages.py",
    "docs/report.md": "tests/docs/test_docs_pages.py",
    "docs/recalibration.md": "tests/docs/test_docs_pages.py",
    "docs/stability.md": "tests/docs/test_docs_pages.py",
    "docs/relevance.md": "tests/harness/test_relevance_models.py",
    "docs/runners.md": "tests/runners/test_runner_laya_onnx.py",
}


def page(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_every_page_with_console_blocks_is_run_by_a_test():
    """A new console block on a new page fails here until a test runs it."""
    pages = sorted(str(p.relative_to(ROOT)) for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
                   if "```console" in p.read_text(encoding="utf-8"))
    assert pages == sorted(RUN_BY)
    for name, test in RUN_BY.items():
        assert name in (ROOT / test).read_text(encoding="utf-8"), (name, test)


def folder(tmp_path: Path) -> Path:
    """A fresh working folder whose ../shared is the stored data, as beside a clone."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(SHARED.resolve())
    return work


def shared_env() -> Dict[str, str]:
    return {"LAYA_CASES_SHARED": str(SHARED.resolve())}


@pytest.mark.slow
@needs_shared_data("banking77")
def test_datasets_md(tmp_path):
    import datasets

    work = folder(tmp_path)
    texts = ["I was charged twice", "cancel my plan", "is this a scam?"]
    intents = ["refund", "cancel", "other"]
    for i in range(117):
        texts.append("refund please %d" % i if i % 2 else "stop my subscription %d" % i)
        intents.append("refund" if i % 2 else "cancel")
    saved = datasets.Dataset.from_dict({"text": texts, "intent": intents, "lang": ["en"] * 120})
    datasets.DatasetDict({"test": saved}).save_to_disk(str(work / "saved"))
    (work / "reviews.csv").write_text("review,stars\ngreat,2\nbroken on arrival,0\nfine,1\n", encoding="utf-8")
    run_console(page("docs/datasets.md"), work, shared_env())
    assert datasets.load_from_disk(str(work / "run-cases")).num_rows == 48


@pytest.mark.slow
def test_report_md(tmp_path):
    """`rank` and `diff --margin` of the recorded answers against the default model (MiniLM on the bundled
    16 rows), and the policy the page shows (`policy.json`) over them."""
    work = folder(tmp_path)
    text = page("docs/report.md")
    (work / "policy.json").write_text(_policy_of(text, "policy.json"))
    run_console(text, work)


@pytest.mark.slow
def test_recalibration_md(tmp_path):
    """`calibrate` on the bundled answers split as the page says (`head -8`, `tail -8`): ingest only, no model.
    The page's MASSIVE section is a recorded run (two MiniLM runs of 500 rows), not rerun here."""
    work = folder(tmp_path)
    lines = (ROOT / "data" / "support.answers.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (work / "dev.answers.jsonl").write_text("".join(lines[:8]), encoding="utf-8")
    (work / "test.answers.jsonl").write_text("".join(lines[-8:]), encoding="utf-8")
    run_console(page("docs/recalibration.md"), work)
    doc = json.loads((work / "calibration.json").read_text(encoding="utf-8"))
    assert doc["schema"] == "laya-cases-calibration/1" and len(doc["apply"]["reliability"]["before"]) == 15


@pytest.mark.slow
def test_stability_md(tmp_path):
    """stability, its gate, audit and relabel over recorded answers (no model)."""
    run_console(page("docs/stability.md"), folder(tmp_path))


def _policy_of(text: str, name: str) -> str:
    """The JSON block just before the prose/console that names `name`."""
    before = text.split("`%s`" % name, 1)[1]
    return re.search(r"```json\n(.*?)```", before, re.S).group(1)


@pytest.mark.slow
@needs_shared_data("massive")
@needs_shared_data("banking77")
def test_presentation_robustness_shortlist_and_plots_md(tmp_path):
    """The model pages: the test checkpoint and MiniLM on 200 MASSIVE and 77 BANKING77 rows (about a
    minute on two cores), then the plots of their runs."""
    pytest.importorskip("laya")
    from laya_checkpoint import build

    work = folder(tmp_path)
    build(work / "ckpt")
    run_console(page("docs/presentation.md"), work, shared_env())
    robustness = page("docs/robustness.md")
    (work / "robustness-policy.json").write_text(_policy_of(robustness, "robustness-policy.json"))
    run_console(robustness, work, shared_env())
    run_console(page("docs/shortlist.md"), work, shared_env())
    run_console(page("docs/plots.md"), work, shared_env())
    for png in ("shortlist_recall.png", "languages.png", "robustness_agreement.png"):
        assert (work / "plots" / png).stat().st_size > 1000
