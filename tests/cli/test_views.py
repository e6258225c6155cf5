"""Views for people: `report/run --view table`, the `runs` table, --help texts, the progress bar.

The reference's text stays the default output of `report` and `run` byte for byte (S4.5), and the
JSON/Markdown files do not depend on the view. The table view must show every metric with its
counts (S9.1 `extensions`) and fit a 100-column terminal.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Dict, List

import pytest
import typer
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, SPEC_FIXTURES
from doubles import ExplodingRunnerDouble
from laya_cases.core import dataset as D
from laya_cases.report import build as R
from laya_cases_cli import console as V
from laya_cases_cli import runs_table as RT
from laya_cases_cli.progress import RowProgress, count_rows
from laya_cases.runners import registry
from laya_cases_cli.app import app
from test_cli import store  # noqa: F401  (the bundled answers ingested as run `base`, once per module)
from laya_cases.query.sql import connect

DATASET = ROOT / "data" / "support.jsonl"
ANSWERS = ROOT / "data" / "support.answers.jsonl"
WIDE = {"COLUMNS": "100"}


def invoke(*args: str, env: Dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def _doc(store: Path, tmp_path: Path, *flags: str) -> dict:
    out = tmp_path / "doc.json"
    assert invoke("report", "base", "-w", str(store), "--json", str(out), *flags).exit_code == 0
    return json.loads(out.read_text())


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


# ---------------------------------------------------------------------------- report --view
@pytest.mark.slow
def test_default_view_is_the_reference_text_byte_for_byte_S4_5(store, tmp_path):
    """No flag and `--view text` print exactly text_lines(doc); the files do not depend on the view."""
    files = {}
    outputs = {}
    for view in ("default", "text", "table"):
        js, md = tmp_path / ("%s.json" % view), tmp_path / ("%s.md" % view)
        flags = [] if view == "default" else ["--view", view]
        result = invoke("report", "base", "-w", str(store), "--slice", "language", "--slice", "tag",
                        "--json", str(js), "--markdown", str(md), *flags, env=WIDE)
        assert result.exit_code == 0 and result.stderr == "", result.stderr
        outputs[view] = result.stdout
        files[view] = (js.read_bytes(), md.read_bytes())
    doc = json.loads(files["default"][0])
    assert outputs["default"] == outputs["text"] == "".join(
        line + "\n" for line in R.text_lines(doc, ["language", "tag"]))
    assert outputs["table"] != outputs["text"]
    assert files["default"] == files["text"] == files["table"]


def test_table_view_shows_every_metric_with_its_counts_S9_1(store, tmp_path):
    doc = _doc(store, tmp_path)
    result = invoke("report", "base", "-w", str(store), "--view", "table", env=WIDE)
    assert result.exit_code == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.strip()}
    assert set(doc["overall"]) <= set(rows)
    ext = doc["extensions"]["overall"]
    acc = ext["choice_accuracy"]
    assert rows["choice_accuracy"][1:4] == ["%.4f" % doc["overall"]["choice_accuracy"], str(acc["n"]), str(acc["hits"])]
    assert rows["ece"][1:] == ["%.4f" % doc["overall"]["ece"], str(ext["ece"]["n_paired"])]
    sel = ext["selective_accuracy@50"]
    assert rows["selective_accuracy@50"][1:] == ["%.4f" % doc["overall"]["selective_accuracy@50"],
                                                 str(sel["accepted"]), str(sel["hits"]), str(sel["N"])]
    assert "run base (ingest): 16 rows, 48 cases, 0 errors" in result.stdout
    assert _widest(result.stdout) <= 100


@pytest.mark.slow
def test_table_view_slices_have_one_row_per_group_and_its_case_count(store, tmp_path):
    doc = _doc(store, tmp_path, "--slice", "language")
    result = invoke("report", "base", "-w", str(store), "--view", "table", "--slice", "language", "--slice", "qid",
                    env=WIDE)
    assert result.exit_code == 0, result.stderr
    sql = invoke("sql", "SELECT language_key AS k, count(*) AS n FROM cases GROUP BY 1", "-w", str(store),
                 "--format", "json")
    cases = {r["k"]: r["n"] for r in json.loads(sql.stdout)}
    assert set(cases) == {"de", "en"}
    lines = result.stdout.splitlines()
    titles = [i for i, line in enumerate(lines) if line.startswith("by language")]
    assert titles, result.stdout
    shown = set()
    for start in titles:                      # every table of the dimension: header, rule, one row per group
        header = lines[start + 1].split()
        assert header[:2] == ["language", "cases"]
        for line in lines[start + 3:start + 3 + len(cases)]:
            cells = line.split()
            key, count = cells[0], int(cells[1])
            assert count == cases[key]
            values = doc["slices"]["language"][key]
            by_name = dict(zip(header[2:], cells[2:]))
            for metric, text in by_name.items():
                assert text == "%.4f" % values[metric]
            shown |= set(by_name)
    assert shown == set(doc["slices"]["language"]["de"]) | set(doc["slices"]["language"]["en"])
    assert any(line.startswith("by qid") for line in lines)
    assert _widest(result.stdout) <= 100


@pytest.mark.slow
def test_table_view_fits_100_columns_with_many_metrics(store):
    result = invoke("report", "base", "-w", str(store), "--view", "table", "--score-within", "0.25",
                    "--score-within", "0.5", "--score-within", "1", "--coverage", "0.9", "--threshold", "0.5",
                    "--slice", "language", "--slice", "qid", "--slice", "tag", env=WIDE)
    assert result.exit_code == 0, result.stderr
    assert _widest(result.stdout) <= 100
    for name in ("score_within_0.25", "score_within_0.5", "score_within_1", "coverage 0.9", "confidence >= 0.5",
                 "selective_accuracy@80"):
        assert name in result.stdout, name
    # a 60-column terminal gets narrower tables, not wrapped cells
    narrow = invoke("report", "base", "-w", str(store), "--view", "table", "--slice", "language",
                    env={"COLUMNS": "60"})
    assert "choice_accuracy" in narrow.stdout and "selective_accuracy@50" in narrow.stdout


def test_nan_absent_and_dropped_cells():
    """NaN prints as `nan`, an absent metric is a blank cell, a dropped paired metric is noted (S3.3)."""
    doc = {"overall": {"choice_accuracy": 0.5, "mean_confidence": math.nan},
           "slices": {"language": {"de": {"choice_accuracy": 1.0}, "en": {"mean_confidence": math.nan}}},
           "cases": [{"qid": "q", "language": "de", "tags": []}, {"qid": "q", "language": "en", "tags": []},
                     {"qid": "q", "language": "en", "tags": []}],
           "extensions": {"overall": {"choice_accuracy": {"n": 2, "hits": 1}, "mean_confidence": {"n": 3},
                                      "ece": {"n": 0, "reason": "nan_dropped", "n_paired": 3}},
                          "slices": {"language": {"de": {"n_cases": 1}, "en": {"n_cases": 2}}}}}
    assert (V.fmt(math.nan), V.fmt(None), V.fmt(0.25)) == ("nan", "", "0.2500")
    text = V.render(V.report_view(doc, ["language"]), 100)
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert lines["mean_confidence"].split()[1] == "nan"
    assert "ece" in lines and "NaN, not published (S3.3)" in lines["ece"]
    assert lines["de"].split() == ["de", "1", "1.0000"]               # mean_confidence blank for de
    assert lines["en"].split() == ["en", "2", "nan"]                  # choice_accuracy blank for en
    assert lines["en"].index("nan") > lines["de"].index("1.0000")     # ... in the second column


def test_a_control_character_in_a_slice_value_stays_on_its_row():
    """A newline (or tab, or a rich markup bracket) inside a slice value is printed escaped, literally,
    on the group's one row (issue 15 item 8)."""
    groups = {"en\nde": {"choice_accuracy": 0.5}, "t\tab": {"choice_accuracy": 1.0}, "[bold]x": {}}
    doc = {"overall": {}, "slices": {"tag": groups},
           "extensions": {"slices": {"tag": {key: {"n_cases": 2} for key in groups}}}}
    text = V.render(V.slice_tables(doc, "tag"), 100)
    lines = text.splitlines()
    assert [line.split()[:2] for line in lines[3:]] == [["[bold]x", "2"], ["en\\nde", "2"], ["t\\tab", "2"]]
    assert len(lines) == 6, text


def test_view_must_be_text_or_table(store):
    result = invoke("report", "base", "-w", str(store), "--view", "html")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "laya-cases: --view must be text or table, got 'html'\n"


@pytest.mark.slow
def test_run_view_table_is_what_report_prints(tmp_path):
    """`run --view table` prints what `report RUN --view table` prints later (same document)."""
    registry.register(ExplodingRunnerDouble.name, ExplodingRunnerDouble)
    try:
        wh = str(tmp_path / "wh")
        ran = invoke("run", str(SPEC_FIXTURES / "ds_batch.jsonl"), "--model", "exploding-double", "--on-error",
                     "skip", "--run-id", "s", "--view", "table", "--slice", "language", "-w", wh, env=WIDE)
        assert ran.exit_code == 0, ran.stderr
        again = invoke("report", "s", "--view", "table", "--slice", "language", "-w", wh, env=WIDE)
        assert ran.stdout == again.stdout and "by language" in ran.stdout and "1 errors" in ran.stdout
    finally:
        registry.unregister(ExplodingRunnerDouble.name)


# ---------------------------------------------------------------------------- runs
RUN_COLUMNS = ["run_id", "kind", "runner", "model_id", "model_revision", "n_rows", "n_cases", "n_errors", "dataset",
               "dataset_sha256", "labelled_rows_sha256", "questions_sha256", "schema_version", "created_at"]


def test_runs_table_fits_and_machine_formats_are_complete(store):
    table = invoke("runs", "-w", str(store), env=WIDE)
    assert table.exit_code == 0 and _widest(table.stdout) <= 100
    row = next(line.split() for line in table.stdout.splitlines() if line.startswith("base "))
    as_json = json.loads(invoke("runs", "-w", str(store), "--format", "json").stdout)
    assert list(as_json[0]) == RUN_COLUMNS
    full = as_json[0]["dataset_sha256"]
    assert len(full) == 64 and full[:8] in row and full not in table.stdout
    assert "48/0" in row and "support.jsonl" in table.stdout
    as_csv = list(csv.DictReader(io.StringIO(invoke("runs", "-w", str(store), "--format", "csv").stdout)))
    assert list(as_csv[0]) == RUN_COLUMNS and as_csv[0]["dataset_sha256"] == full


def test_runs_table_cuts_long_names_from_the_left():
    rows = [{"run_id": "20261129T144502-52707e", "created_at": "2026-11-29T14:45:06+00:00", "runner": "minilm",
             "model_id": "sentence-transformers/all-MiniLM-L6-v2", "n_cases": 123456, "n_errors": 7,
             "dataset": "/a/very/long/path/to/some/evaluation/data/support.jsonl", "dataset_sha256": "ab" * 32}]
    for width in (100, 80):
        text = V.render([RT.runs_table(rows, width)], width)
        assert _widest(text) <= width and "123456/7" in text
    wide = V.render([RT.runs_table(rows, 100)], 100)
    assert "all-MiniLM-L6-v2" in wide and "support.jsonl" in wide and "abababab" in wide



@pytest.mark.parametrize("width", [100, 80, 60, 40])
def test_runs_table_never_cuts_a_run_id(width):
    """The id is what the user types next: at any width it is printed whole on one line, the rest folds."""
    ids = ["20261129T144502-52707e", "a-rather-long-candidate-run-id-0042"]
    rows = [{"run_id": rid, "created_at": "2026-11-29T14:45:06+00:00", "runner": "minilm",
             "model_id": "sentence-transformers/all-MiniLM-L6-v2", "n_cases": 48, "n_errors": 0,
             "dataset": "data/support.jsonl", "dataset_sha256": "ab" * 32} for rid in ids]
    text = V.render([RT.runs_table(rows, width)], width)
    assert _widest(text) <= max(width, len(ids[1]) + 2 * 6)
    for rid in ids:
        assert any(line.startswith(rid + " ") or line == rid for line in text.splitlines()), (rid, text)


@pytest.mark.slow
def test_runs_text_is_richs_table_byte_for_byte_on_random_rows():
    """The plain formatter `runs` uses when the table fits is an optimisation, not a second look: over
    random ids, models, paths, counts and wide characters it prints exactly what rich renders."""
    import random

    rng = random.Random(7)
    alphabet = "abcXYZ019-_.:/é漢"
    for trial in range(200):
        rows = [{"run_id": "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))),
                 "created_at": rng.choice(["2026-11-29T14:45:06+00:00", "", None]),
                 "runner": rng.choice(["minilm", "onnx", "recorded", "", None]),
                 "model_id": rng.choice(["sentence-transformers/all-MiniLM-L6-v2", "ckpt/", "", None, "漢字モデル"]),
                 "n_cases": rng.choice([0, 48, 123456, None]), "n_errors": rng.choice([0, 7, None]),
                 "dataset": rng.choice(["data/support.jsonl", "/a/very/long/path/to/some/data/b77.jsonl", ""]),
                 "dataset_sha256": rng.choice(["ab" * 32, "", None])} for _ in range(rng.randint(1, 6))]
        width = rng.choice([100, 120, 80, 200])
        assert RT.runs_text(rows, width) == V.render([RT.runs_table(rows, width)], width), (trial, rows, width)

# ---------------------------------------------------------------------------- --help
def _command_names() -> List[str]:
    return list(typer.main.get_command(app).commands)


def _sub_commands() -> List[str]:
    """`group command` for every command of a group (massive run, relevance export, ...)."""
    top = typer.main.get_command(app).commands
    return ["%s %s" % (name, sub) for name, group in top.items() for sub in getattr(group, "commands", {})]


def test_every_help_says_what_and_shows_an_example():
    top = invoke("--help")
    assert top.exit_code == 0
    listed = [line.split()[0] for line in top.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed[:3] == ["run", "ingest", "report"] and sorted(listed) == sorted(_command_names())
    assert not any(line.rstrip().endswith("...") for line in top.stdout.split("Commands:")[1].splitlines())
    for name in _command_names() + _sub_commands():
        result = invoke(*name.split(), "--help")
        assert result.exit_code == 0, name
        assert "Example" in result.stdout and ("laya-cases %s " % name) in result.stdout, name
        assert _widest(result.stdout) <= 100, name
        assert "<list[" not in result.stdout.split("\nOptions:")[-1], name     # an option shows its METAVAR


# ---------------------------------------------------------------------------- progress
def test_no_progress_output_off_a_terminal(tmp_path):
    """stderr is not a terminal here: ingest prints only the run id, the bar is disabled."""
    result = invoke("ingest", str(ANSWERS), "-w", str(tmp_path / "wh"), "--run-id", "quiet")
    assert result.exit_code == 0 and result.stdout == "quiet\n" and result.stderr == ""
    bar = RowProgress("x")
    assert not bar.enabled
    with bar:
        bar.set_total(3)
        bar.update(3)



@pytest.mark.slow
def test_the_report_names_each_phase_it_computes(store):  # noqa: F811
    """The report's bar is named by the SQL file being computed, counted over the pipeline's tables."""
    from laya_cases.query import catalogue
    from laya_cases.store.warehouse import Warehouse

    seen = []
    wh = Warehouse(store)
    R.build(connect(wh, ["base"]), "base", R.Options(include_cases=False, phase=lambda *a: seen.append(a)))
    total = seen[0][1]
    assert [d for d, _, _ in seen] == list(range(total)) and {t for _, t, _ in seen} == {total}
    paths = [p for _, _, p in seen]
    assert "pipeline/cells.sql" in paths and "pipeline/level_cells.sql" in paths
    assert all(p in {f.path for f in catalogue.files("pipeline") + catalogue.files("metrics")} for p in paths)
    silent = R.build(connect(wh, ["base"]), "base", R.Options(include_cases=False))
    loud = R.build(connect(wh, ["base"]), "base", R.Options(include_cases=False, phase=lambda *a: None))
    assert json.dumps(silent, sort_keys=True) == json.dumps(loud, sort_keys=True)

def test_count_rows_matches_the_reader():
    """The bar's total skips blank and `#` lines as the S1.1 reader does."""
    for path in (DATASET, ANSWERS):
        assert count_rows(str(path)) == len(D.load(str(path)))
    assert count_rows(str(ROOT / "no-such-file.jsonl")) is None
