"""Offline models over the stored XQuAD-R relevance set (slow; needs ../shared/data/xquad_r_relevance):
MiniLM scoring (cosine -> (c + 1) / 2) and SmolLM2 P(yes) over three languages, the first 6 rows of each
(--limit 6 keeps CI short), write all four CSVs; a second `relevance run` redoes nothing."""
from __future__ import annotations

import csv
import hashlib
import json
import math

import pytest
from typer.testing import CliRunner

from docs_blocks import run_console
from helpers import ROOT, needs_shared_data, shared_data
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

pytestmark = pytest.mark.slow

MANIFEST = str(ROOT / "data" / "relevance" / "xquad_r_relevance.json")
LANGS = "en,de,zh"


def _invoke(*args: str):
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app

    return CliRunner().invoke(app, list(args))


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@needs_shared_data("xquad_r_relevance")
def test_minilm_and_smollm2_over_three_languages_write_the_four_csvs(tmp_path):
    """docs/relevance.md's console block, run as written (its printed lines compared), makes the store."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(shared_data().parent.resolve())
    run_console((ROOT / "docs" / "relevance.md").read_text(encoding="utf-8"), work,
                {"LAYA_CASES_SHARED": str(shared_data().parent.resolve())})
    wh = str(work / "warehouse")
    common = ["--manifest", MANIFEST, "--data-root", str(shared_data()), "--langs", LANGS, "--limit", "6", "-w", wh]
    again = _invoke("relevance", "run", "--model", "minilm", *common)
    assert again.exit_code == 0 and again.output.count("\tdone") == 3 and "committed\n" not in again.output
    assert len(Warehouse(wh).run_ids()) == 6

    con = connect(Warehouse(wh))
    rows = con.execute("SELECT model_key, relevance_score, no_score, native_score FROM cases").fetchall()
    assert len(rows) == 36
    for model, yes, no, native in rows:
        assert 0.0 <= yes <= 1.0 and abs(yes + no - 1.0) < 1e-12
        if model == "minilm":
            assert abs(yes - (native + 1) / 2) < 1e-12          # native = cosine
        else:
            assert abs(yes - 1 / (1 + math.exp(-native))) < 1e-9   # native = logit P(yes)
    facts = [json.loads(s)["relevance"] for (s,) in con.execute("SELECT settings_json FROM runs").fetchall()]
    assert {f["mode"] for f in facts} == {"scoring"} and all(f["throughput_items_per_second"] > 0 for f in facts)
    # S8.2: every prompting run read the benchmark's template file (no --template given), digest recorded
    prompt = (ROOT / "data" / "relevance" / "prompt.txt").read_text(encoding="utf-8")
    assert {(f["model_name"], f["prompt_sha256"]) for f in facts} == {
        ("minilm", None), ("smollm2", hashlib.sha256(prompt.encode("utf-8")).hexdigest())}
    ids = con.execute("SELECT DISTINCT language_key, item_id, source_item_id FROM cases").fetchall()
    assert len(ids) == 18 and all(item == "%s/%s" % (lang, source) for lang, item, source in ids)

    out = work / "results"
    assert len(_csv(out / "leaderboard.csv")) == 6
    assert [r["model_id"] for r in _csv(out / "aggregates.csv")] in (["minilm", "smollm2"], ["smollm2", "minilm"])
    assert len(_csv(out / "threshold_sweep.csv")) == 38
    summary = _csv(out / "scoring_summary.csv")
    assert len(summary) == 2 and all(r["roc_auc_macro"] for r in summary)
    assert (work / "leaderboard.md").read_text().startswith("| group | position | model_id |")


@needs_shared_data("xquad_r_relevance")
def test_smollm2_generate_keeps_raw_text_and_records_the_parse_rule_and_prompt(tmp_path):
    template = ROOT / "data" / "relevance" / "prompt.txt"
    wh = str(tmp_path / "wh")
    result = _invoke("relevance", "run", "--manifest", MANIFEST, "--data-root", str(shared_data()), "--langs", "en",
                     "--limit", "2", "--model", "smollm2", "--runner", "hf-generate", "--template", str(template),
                     "--runner-option", "max_new_tokens=16", "-w", wh)
    assert result.exit_code == 0, result.output
    con = connect(Warehouse(wh))
    rows = con.execute("SELECT raw_text, parsed, truncated, answer_type, model_key FROM cases").fetchall()
    assert len(rows) == 2 and all(isinstance(r[0], str) for r in rows)
    for raw, parsed, truncated, answer_type, model in rows:
        assert parsed == (answer_type == "noul") and isinstance(truncated, bool) and model == "smollm2-hf-generate"
    facts = json.loads(con.execute("SELECT settings_json FROM runs").fetchone()[0])["relevance"]
    assert facts["mode"] == "generative" and facts["decoding"] == "greedy" and facts["max_new_tokens"] == 16
    assert "unparsed" in facts["decision_rule"]
    assert facts["prompt_sha256"] == hashlib.sha256(template.read_text(encoding="utf-8").encode()).hexdigest()
    out = tmp_path / "out"
    assert _invoke("relevance", "export", "--out", str(out), "-w", wh).exit_code == 0
    (row,) = _csv(out / "leaderboard.csv")
    assert row["generation_mode"] == "generate" and int(row["unparsed"]) == sum(1 for r in rows if not r[1])
