"""`laya-cases plot RUN --kind languages|shortlist|robustness`: each PNG from the store's SQL (no model),
byte-identical when drawn twice, and showing what its title says (the drawn data is the SQL's)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT, cli, write_jsonl
from test_shortlist import T75_PREFS, T75_QUERIES, T75_ROWS, PreferenceRunnerDouble, ScriptedEmbedderDouble, _dataset
from laya_cases.views import plot_kinds as PK
from laya_cases.report import build as R
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs
from laya_cases.harness.shortlist.harness import ShortlistOptions, execute as shortlist_execute
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

PNG = b"\x89PNG\r\n\x1a\n"


class FirstSlotRunnerDouble(Runner):
    """A scripted runner whose answer depends only on option position: 0.7 on the first option shown."""

    name = "first-slot-double"
    capabilities = Capabilities()

    def __init__(self, **kw):
        self.info = RunnerInfo(runner=self.name, model_id="first-slot-double")

    def predict_batch(self, states, questions, **kwargs):
        out = []
        for _ in states:
            answers = {}
            for qid, body in questions.items():
                n = len(body["criteria"])
                answers[qid] = answer_from_probs(body, [0.7] + [0.3 / (n - 1)] * (n - 1))
            out.append({"answers": answers})
        return out


def _shortlist_store(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    queries = dict(T75_QUERIES, r2=[0.5, 1.0, 0.0, 0.0])            # row 2 keeps [b, a]: its gold ranks 2nd
    shortlist_execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=2, run_id="t75"),
                      runner=PreferenceRunnerDouble(T75_PREFS), embed=ScriptedEmbedderDouble(queries),
                      embedder_id="scripted-embedder")
    return wh


def _robustness_store(tmp_path, wh):
    from laya_cases.harness.robustness.execute import RobustnessOptions, execute

    criteria = {"refund": "money back", "cancel": "stop it", "delivery": "where is it", "other": "anything"}
    rows = [{"state": "s%d" % i, "language": lang, "questions": {"intent": {"type": "choice", "instructions": "i",
             "criteria": criteria}}, "expected": {"intent": "refund"}} for i, lang in enumerate(["en"] * 6 + ["de"] * 4)]
    execute(wh, RobustnessOptions(str(write_jsonl(tmp_path / "r.jsonl", rows)), run_id="rob"),
            runner=FirstSlotRunnerDouble())


def _twice(tmp_path, wh, run, kind, name):
    for out in ("a", "b"):
        cli("plot", run, "-w", str(wh.root), "--kind", kind, "--bootstrap", "200", "--out", str(tmp_path / out),
            check=True)
    data = (tmp_path / "a" / name).read_bytes()
    assert data[:8] == PNG and len(data) > 5000
    assert data == (tmp_path / "b" / name).read_bytes()          # byte-identical for a fixed run


@pytest.mark.slow   # CLI runs
def test_shortlist_recall_curve_png_is_the_stored_ranks(tmp_path):
    wh = _shortlist_store(tmp_path)
    _twice(tmp_path, wh, "t75", "shortlist", "shortlist_recall.png")
    curve = PK.recall_curve(connect(wh, ["t75"]), "t75")
    assert [(p["k"], p["recalled"], p["n"]) for p in curve] == [(1, 2, 4), (2, 3, 4)]   # gold ranks 1, 2, -, 1
    fig = PK.figures(wh, "t75", "shortlist")["shortlist_recall"]
    ax = fig.axes[0]
    assert ax.get_title().startswith("Shortlist recall@k, run t75 (4 cases")
    assert list(ax.lines[0].get_ydata()) == [0.5, 0.75] and list(ax.lines[0].get_xdata()) == [1, 2]
    doc = R.build(connect(wh, ["t75"]), "t75", R.Options(include_cases=False))
    assert curve[-1]["recall"] == doc["overall"]["shortlist_recall_at_k"]


@pytest.mark.slow
def test_languages_png_bars_are_the_reports_accuracy_interval_and_ece(tmp_path):
    wh = _shortlist_store(tmp_path)
    _twice(tmp_path, wh, "t75", "languages", "languages.png")
    fig = PK.figures(wh, "t75", "languages", bootstrap=200)["languages"]
    top, bottom = fig.axes
    assert top.get_title() == "choice_accuracy and ECE by language, run t75"
    doc = R.build(connect(wh, ["t75"]), "t75", R.Options(include_cases=False, bootstrap=200))
    langs = sorted(doc["slices"]["language"])
    assert [p.get_height() for p in top.patches] == [doc["slices"]["language"][l]["choice_accuracy"] for l in langs]
    assert [p.get_height() for p in bottom.patches] == [doc["slices"]["language"][l]["ece"] for l in langs]
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["de\nn=2", "en\nn=2"]
    ci = doc["extensions"]["slices"]["language"]["en"]["choice_accuracy"]["ci"]
    segments = top.collections[0].get_segments()          # the error bars, one per language
    assert list(segments[1][:, 1]) == [ci["lower"], ci["upper"]]


@pytest.mark.slow
def test_robustness_png_is_agreement_per_transform_and_language(tmp_path):
    from laya_cases.harness.robustness.summary import summarize

    wh = Warehouse(tmp_path / "wh")
    _robustness_store(tmp_path, wh)
    _twice(tmp_path, wh, "rob", "robustness", "robustness_agreement.png")
    summary = summarize(connect(wh, ["rob"], variants=True), "rob")
    ax = PK.figures(wh, "rob", "robustness")["robustness_agreement"].axes[0]
    assert ax.get_title() == "Agreement with the baseline per transform and language, run rob"
    heights = [p.get_height() for p in ax.patches]
    order = [summary["summary"], summary["languages"]["de"], summary["languages"]["en"]]
    assert heights == [g["option_order"]["semantic_agreement_rate"] for g in order] + \
        [g["label_rename"]["semantic_agreement_rate"] for g in order]
    assert heights[3:] == [1.0, 1.0, 1.0] and max(heights[:3]) < 1.0     # position-only: renames agree


@pytest.mark.slow   # CLI processes
def test_plot_kind_usage_errors(tmp_path):
    wh = _shortlist_store(tmp_path)
    for args, needle in ((("t75", "--kind", "pie"), "--kind must be one of"),
                         (("t75", "--kind", "robustness"), "not a robustness run")):
        proc = cli("plot", *args, "-w", str(wh.root), "--out", str(tmp_path / "p"))
        assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.splitlines()) == 1
        assert not (tmp_path / "p").exists()


@pytest.mark.slow
def test_plots_load_no_model(tmp_path):
    wh = _shortlist_store(tmp_path)
    code = ("import sys; from laya_cases.store.warehouse import Warehouse; from laya_cases.views.plot_kinds import plot_kind; "
            "wh = Warehouse(%r); [plot_kind(wh, 't75', k, __import__('pathlib').Path(%r), 200) "
            "for k in ('languages', 'shortlist')]; "
            "assert not {'torch', 'transformers', 'laya'} & set(sys.modules), sorted(sys.modules)"
            % (str(wh.root), str(tmp_path / "out")))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_docs_plots_md_recall_query_gives_the_curve(tmp_path):
    import duckdb

    wh = _shortlist_store(tmp_path)
    text = (ROOT / "docs" / "plots.md").read_text(encoding="utf-8")
    query = text.split("```sql\n", 1)[1].split("```", 1)[0]
    query = query.replace("warehouse/", str(wh.root) + "/").replace("'b77'", "'t75'")
    got = duckdb.connect().execute(query).fetchall()
    curve = PK.recall_curve(connect(wh, ["t75"]), "t75")
    assert [r for _, r in got[:2]] == [p["recall"] for p in curve] and got[-1] == (10, 0.75)
