"""Cross-lingual consistency (sql/crosslingual/, laya_cases/harness/crosslingual.py, `laya-cases crosslingual`).

Two hand-computed 3 items x 3 languages grids go through ingest and the SQL; a real multi-language
MiniLM run over MASSIVE is checked against a plain polars computation over its stored rows (slow).
"""
from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path
from typing import Dict, List

import pytest
from typer.testing import CliRunner

from helpers import ROOT, needs_shared_data, shared_data, write_jsonl

import laya_cases_cli.commands  # noqa: F401  (registers the commands)
from laya_cases.core.errors import UsageError
from laya_cases.harness import crosslingual as X
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

GOLD = {"A": "x", "B": "y", "C": "z"}
#: T-X1: item A right everywhere, C nowhere; no language's errors concentrate on en-right items.
X1 = {"en": {"A": "x", "B": "y", "C": "x"}, "de": {"A": "x", "B": "z", "C": "y"}, "fr": {"A": "x", "B": "z", "C": "x"}}
#: T-X2: de is right on C, which en misses, and wrong on B, which en gets: its errors concentrate.
X2 = {"en": {"A": "x", "B": "y", "C": "x"}, "de": {"A": "x", "B": "x", "C": "z"}, "fr": {"A": "x", "B": "z", "C": "y"}}


def _answers(grid: Dict[str, Dict[str, str]]) -> List[dict]:
    body = {"type": "choice", "instructions": "intent?", "criteria": ["x", "y", "z"]}
    rows = []
    for lang, preds in grid.items():
        for item, pred in preds.items():
            probs = {k: (0.8 if k == pred else 0.1) for k in "xyz"}
            rows.append({"state": "%s in %s" % (item, lang), "questions": {"intent": body},
                         "expected": {"intent": GOLD[item]}, "language": lang, "item_id": item,
                         "answers": {"intent": {"type": "choice", "choice": pred, "probabilities": probs,
                                                "answer_confidence": 0.8}}})
    return rows


def _ingest(tmp_path: Path, grid, rid: str = "grid") -> Path:
    wh = tmp_path / "wh"
    path = write_jsonl(tmp_path / ("%s.jsonl" % rid), _answers(grid))
    result = CliRunner().invoke(app, ["ingest", str(path), "-w", str(wh), "--run-id", rid])
    assert result.exit_code == 0, (result.stderr, result.exception)
    return wh


def _close(got, want) -> bool:
    if want is None or isinstance(want, (bool, str, list)):
        return got == want
    return abs(got - float(want)) < 1e-12


def _check(rows: List[dict], want: List[dict]) -> None:
    assert len(rows) == len(want)
    for row, w in zip(rows, want):
        bad = {k: (row[k], v) for k, v in w.items() if not _close(row[k], v)}
        assert not bad, (row.get("lang") or row.get("item_id"), bad)


def test_x1_hand_computed(tmp_path):
    doc = X.report(Warehouse(_ingest(tmp_path, X1)), "grid")
    _check([doc["summary"]], [dict(items=3, languages=3, cases=9, complete_items=3, all_right_rate=F(1, 3),
                                   none_right_rate=F(1, 3), mean_share_right=F(4, 9))])
    _check(doc["items"], [
        dict(item_id="B", gold="y", languages=3, right=1, share_right=F(1, 3), all_right=False, none_right=False,
             pivot_right=1, distinct_predictions=2, wrong_langs=["de", "fr"]),
        dict(item_id="C", gold="z", right=0, share_right=0, none_right=True, pivot_right=0, distinct_predictions=2,
             wrong_langs=["de", "en", "fr"]),
        dict(item_id="A", right=3, share_right=1, all_right=True, pivot_right=1, distinct_predictions=1,
             wrong_langs=[])])
    _check(doc["languages"], [
        dict(lang="en", n=3, accuracy=F(2, 3), shared=3, agreement=1, acc_on_pivot_right=1, acc_on_pivot_wrong=0,
             errors=1, errors_on_pivot_right=0, error_share_on_pivot_right=0, pivot_right_rate=F(2, 3),
             error_excess=-F(2, 3), error_lift=0, concentrated=False),
        dict(lang="de", accuracy=F(1, 3), agreement=F(1, 3), acc_on_pivot_right=F(1, 2), acc_on_pivot_wrong=0,
             errors=2, errors_on_pivot_right=1, error_share_on_pivot_right=F(1, 2), error_excess=-F(1, 6),
             error_lift=F(3, 4), concentrated=False),
        dict(lang="fr", accuracy=F(1, 3), agreement=F(2, 3),         # agreeing on a wrong label counts
             acc_on_pivot_right=F(1, 2), acc_on_pivot_wrong=0, errors=2, error_excess=-F(1, 6), concentrated=False)])


def test_x2_errors_concentrated_on_pivot_right_items(tmp_path):
    doc = X.report(Warehouse(_ingest(tmp_path, X2)), "grid")
    _check([doc["summary"]], [dict(all_right_rate=F(1, 3), none_right_rate=0, mean_share_right=F(5, 9))])
    assert [(i["item_id"], i["right"]) for i in doc["items"]] == [("B", 1), ("C", 1), ("A", 3)]
    _check(doc["languages"], [
        dict(lang="en", error_excess=-F(2, 3), concentrated=False),
        dict(lang="de", accuracy=F(2, 3), agreement=F(1, 3), acc_on_pivot_right=F(1, 2), acc_on_pivot_wrong=1,
             errors=1, errors_on_pivot_right=1, error_share_on_pivot_right=1, pivot_right_rate=F(2, 3),
             error_excess=F(1, 3), error_lift=F(3, 2), concentrated=True),
        dict(lang="fr", accuracy=F(1, 3), agreement=F(1, 3), acc_on_pivot_right=F(1, 2), acc_on_pivot_wrong=0,
             error_share_on_pivot_right=F(1, 2), error_excess=-F(1, 6), concentrated=False)])
    # excess > 0 exactly when the language is less accurate on pivot-right items than on pivot-wrong ones
    for row in doc["languages"][1:]:
        assert (row["error_excess"] > 0) == (row["acc_on_pivot_right"] < row["acc_on_pivot_wrong"])
    # another pivot: de's view of the same run
    de = X.report(Warehouse(tmp_path / "wh"), "grid", pivot="de")
    assert de["languages"][0]["lang"] == "de" and de["items"][0]["pivot_right"] is not None


def test_cli_views_and_refusals(tmp_path):
    wh = _ingest(tmp_path, X2)
    runner = CliRunner()
    by_lang = runner.invoke(app, ["crosslingual", "grid", "-w", str(wh), "--json", str(tmp_path / "x.json"),
                                  "--markdown", str(tmp_path / "x.md")])
    assert by_lang.exit_code == 0, by_lang.stderr
    lines = by_lang.stdout.splitlines()
    assert lines[0].startswith("run grid pivot=en items=3 languages=3 all_right=0.3333 none_right=0.0000")
    assert lines[3].split()[0] == "de" and lines[3].endswith("0.3333*")
    doc = json.loads((tmp_path / "x.json").read_text())
    assert doc["pivot"] == "en" and doc["items_total"] == 3 and len(doc["languages"]) == 3
    assert (tmp_path / "x.md").read_text().count("\n| ") == 4
    by_item = runner.invoke(app, ["crosslingual", "grid", "-w", str(wh), "--by", "item", "--limit", "2"])
    assert by_item.exit_code == 0 and by_item.stdout.splitlines()[2].split()[0] == "B"
    assert "2 of 3 items listed" in by_item.stdout
    for args, needle in [(["--pivot", "es"], "--pivot 'es': not a language of run 'grid' (its languages: de, en, fr)"),
                         (["--by", "slot"], "--by must be language or item"),
                         (["--limit", "-1"], "--limit must be >= 0")]:
        bad = runner.invoke(app, ["crosslingual", "grid", "-w", str(wh), *args])
        assert bad.exit_code == 2 and needle in bad.stderr, bad.stderr
    missing = runner.invoke(app, ["crosslingual", "nope", "-w", str(wh)])
    assert missing.exit_code == 2 and "unknown run id 'nope'" in missing.stderr


def test_a_run_without_item_ids_is_refused(tmp_path):
    rows = _answers(X1)
    for row in rows:
        del row["item_id"]
    path = write_jsonl(tmp_path / "plain.jsonl", rows)
    ingested = CliRunner().invoke(app, ["ingest", str(path), "-w", str(tmp_path / "wh"), "--run-id", "plain"])
    assert ingested.exit_code == 0
    with pytest.raises(UsageError, match="no labelled cases carrying both an item_id and a language"):
        X.report(Warehouse(tmp_path / "wh"), "plain")


LOCALES = ("en-US", "de-DE", "fr-FR", "es-ES")


@pytest.mark.slow
@needs_shared_data("massive", "test", "en-US.jsonl")
def test_real_multilingual_run_matches_polars(tmp_path):
    """MiniLM over 40 parallel MASSIVE items in 4 languages; every number re-derived in polars."""
    from laya_cases.harness.massive import sampler as massive
    from laya_cases.run.execute import execute
    from laya_cases.run.options import RunOptions

    rows = [r for loc in LOCALES for r in massive.rows(loc, n_rows=40, source=shared_data("massive", "test"))]
    data = write_jsonl(tmp_path / "massive4.jsonl", rows)
    wh = Warehouse(tmp_path / "wh")
    execute(wh, RunOptions(dataset=str(data), model="minilm", run_id="xl"))
    check_against_polars(wh, "xl")


def check_against_polars(wh: Warehouse, rid: str) -> None:
    import polars as pl

    doc = X.report(wh, rid, limit=None)
    result = connect(wh, [rid]).execute("SELECT item_id, language_key AS lang, predicted, correct FROM cases")
    stored = pl.DataFrame(result.fetchall(), schema=["item_id", "lang", "predicted", "correct"], orient="row")
    assert stored.height == 160 and stored["item_id"].null_count() == 0
    c = stored.with_columns(pl.col("correct").fill_null(False).cast(pl.Int64).alias("right"))
    items = c.group_by("item_id").agg(pl.len().alias("langs"), pl.col("right").sum().alias("n_right"))
    share = dict(zip(items["item_id"], (items["n_right"] / items["langs"]).to_list()))
    assert {i["item_id"]: i["share_right"] for i in doc["items"]} == pytest.approx(share, abs=1e-12)
    s = doc["summary"]
    assert s["all_right_rate"] == pytest.approx((items["n_right"] == items["langs"]).mean(), abs=1e-12)
    assert s["none_right_rate"] == pytest.approx((items["n_right"] == 0).mean(), abs=1e-12)
    assert 0 < s["all_right_rate"] < 1 and 0 < s["none_right_rate"] < 1        # a grid with all three kinds
    en = c.filter(pl.col("lang") == "en").select("item_id", pl.col("predicted").alias("p_pred"),
                                                pl.col("right").alias("p_right"))
    j = c.join(en, on="item_id")
    got = {r["lang"]: r for r in doc["languages"]}
    assert set(got) == {"en", "de", "fr", "es"}
    for lang, g in j.group_by("lang"):
        lang = lang[0]
        agree = (g["predicted"] == g["p_pred"]).fill_null(False).mean()
        pr, pw = g.filter(pl.col("p_right") == 1), g.filter(pl.col("p_right") == 0)
        err = g.filter(pl.col("right") == 0)
        share_err = err.filter(pl.col("p_right") == 1).height / err.height
        base = pr.height / g.height
        row = got[lang]
        assert row["agreement"] == pytest.approx(agree, abs=1e-12)
        assert row["accuracy"] == pytest.approx(g["right"].mean(), abs=1e-12)
        assert row["acc_on_pivot_right"] == pytest.approx(pr["right"].mean(), abs=1e-12)
        assert row["acc_on_pivot_wrong"] == pytest.approx(pw["right"].mean(), abs=1e-12)
        assert row["error_share_on_pivot_right"] == pytest.approx(share_err, abs=1e-12)
        assert row["error_excess"] == pytest.approx(share_err - base, abs=1e-12)
        assert row["concentrated"] == (lang != "en" and share_err - base > 0)
    print({lang: (round(r["accuracy"], 3), round(r["agreement"], 3), round(r["error_excess"], 3))
           for lang, r in got.items()}, s)


def test_docs_plain_duckdb_block_gives_the_library_numbers(tmp_path):
    """docs/crosslingual.md's SQL, run with plain duckdb over the Parquet files, on T-X2."""
    import re

    import duckdb

    wh = _ingest(tmp_path, X2, rid="xl")
    doc = X.report(Warehouse(wh), "xl")
    text = (ROOT / "docs" / "crosslingual.md").read_text(encoding="utf-8")
    block = re.search(r"```sql\n(.*?)```", text, re.S).group(1).replace("'warehouse/", "'%s/" % wh.as_posix())
    con = duckdb.connect()
    results = [con.execute(s).fetchall() for s in block.split(";") if s.strip()]
    assert results[1] == [(doc["summary"]["all_right_rate"], doc["summary"]["none_right_rate"])]
    got = {r["lang"]: r for r in doc["languages"]}
    for lang, agreement, acc_r, acc_w, excess in results[2]:
        row = got[lang]
        assert (agreement, acc_r, acc_w) == (row["agreement"], row["acc_on_pivot_right"], row["acc_on_pivot_wrong"])
        assert abs(excess - row["error_excess"]) < 1e-12
