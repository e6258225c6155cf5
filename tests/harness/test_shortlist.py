"""Shortlist and tournament (S7.17-S7.20): T7.5 and T7.6 exactly, retrieval rules, the stored facts,
the report's metrics per slice (SQL), config and comparability, and the numbers re-derived in DuckDB."""
from __future__ import annotations

import json
import random
from typing import Any, Dict, List

import duckdb
import numpy as np
import pytest

from helpers import ROOT, needs_shared_data, write_jsonl
from laya_cases.core.errors import UsageError
from laya_cases.report import build as R
from laya_cases.gates.documents import comparability_reasons
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs
from laya_cases.harness.shortlist import retrieval
from laya_cases.harness.shortlist.harness import ShortlistOptions, execute
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

LABELS = ["a", "b", "c", "d"]


class PreferenceRunnerDouble(Runner):
    """A scripted decision runner: each state names its preference order over labels; it answers
    every choice question with the first preferred label among the options it is shown (else the
    first option; 0.7 on it, the rest shared), and records each question set it was asked."""

    name = "preference-double"
    capabilities = Capabilities()

    def __init__(self, prefs: Dict[str, List[str]], logits: bool = False) -> None:
        self.prefs, self.logits = prefs, logits
        self.asked: List[Dict[str, Any]] = []
        self.info = RunnerInfo(runner=self.name, model_id="preference-double", revision="r1")

    def predict_batch(self, states, questions, **kwargs):
        out = []
        for state in states:
            self.asked.append(questions)
            answers, facts = {}, {}
            for qid, body in questions.items():
                labels = list(body["criteria"])
                pick = next((l for l in self.prefs[state] if l in labels), labels[0])
                probs = [0.7 if l == pick else 0.3 / max(1, len(labels) - 1) for l in labels]
                answers[qid] = answer_from_probs(body, probs)
                if self.logits:
                    facts[qid] = {"logits": [float(LABELS.index(l)) for l in labels]}
            out.append({"answers": answers, "facts": facts})
        return out


class ScriptedEmbedderDouble:
    """A scripted embedder: option text `x` is the one-hot vector of label x; the query (last line =
    the state) is the state's scripted weight vector. Counts its calls."""

    def __init__(self, queries: Dict[str, List[float]]) -> None:
        self.queries, self.calls = queries, 0

    def __call__(self, texts):
        self.calls += 1
        rows = []
        for text in texts:
            if text in LABELS:
                rows.append(np.eye(len(LABELS))[LABELS.index(text)])
            else:
                rows.append(np.array(self.queries[text.splitlines()[-1]], dtype=float))
        return np.stack(rows)


class RefusingEmbedderDouble:
    def __call__(self, texts):
        raise AssertionError("the embedder must not be called on pass-through")


def _dataset(tmp_path, rows):
    path = tmp_path / "ds.jsonl"
    write_jsonl(path, [{"state": s, "language": lang, "questions": {"intent": {"type": "choice",
                        "instructions": "Which intent?", "criteria": LABELS}}, "expected": {"intent": gold}}
                       for s, lang, gold in rows])
    return str(path)


def _report(wh, rid):
    return R.build(connect(wh, [rid]), rid, R.Options(include_cases=False))


# ---------------------------------------------------------------------------- T7.5
T75_ROWS = [("r1", "en", "a"), ("r2", "en", "a"), ("r3", "de", "c"), ("r4", "de", "a")]
T75_PREFS = {"r1": ["a"], "r2": ["b", "a"], "r3": ["a"], "r4": ["b"]}
T75_QUERIES = {s: [1.0, 0.5, 0.0, -0.2] for s, _, _ in T75_ROWS}     # keeps a, b (k = 2)


def _t75(tmp_path, **kw):
    wh = Warehouse(tmp_path / "wh")
    embed = ScriptedEmbedderDouble(T75_QUERIES)
    runner = PreferenceRunnerDouble(T75_PREFS, **kw)
    rec = execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=2, run_id="t75"), runner=runner,
                  embed=embed, embedder_id="scripted-embedder")
    return wh, rec.run_id, runner, embed


def test_t7_5_statuses_and_metrics(tmp_path):
    wh, rid, runner, embed = _t75(tmp_path)
    doc = _report(wh, rid)
    assert doc["overall"]["shortlist_recall_at_k"] == 0.75
    assert doc["overall"]["shortlist_accuracy_on_recalled"] == 1 / 3
    assert doc["overall"]["choice_accuracy"] == 0.25
    en, de = doc["slices"]["language"]["en"], doc["slices"]["language"]["de"]
    assert (en["shortlist_recall_at_k"], en["shortlist_accuracy_on_recalled"]) == (1.0, 0.5)
    assert (de["shortlist_recall_at_k"], de["shortlist_accuracy_on_recalled"]) == (0.5, 0.0)
    assert doc["slices"]["qid"]["intent"]["shortlist_recall_at_k"] == 0.75
    assert doc["extensions"]["overall"]["shortlist_recall_at_k"] == {"n": 4, "hits": 3}
    config = doc["config"]
    assert config["schema"] == "laya-shortlist-evals-report/1"
    assert config["shortlist"] == {"k": 2, "checkpoint_id": "preference-double@r1",
                                   "embedder_id": "scripted-embedder",
                                   "counts": {"correct": 1, "retrieval_miss": 1, "decision_miss": 2}}
    assert config["dataset_sha256"] and config["dataset"].endswith("ds.jsonl")
    assert embed.calls == 4 and all(list(q["intent"]["criteria"]) == ["a", "b"] for q in runner.asked)
    rows = connect(wh, [rid]).execute("SELECT shortlist_status, shortlist_labels, shortlist_scores FROM cases "
                                     "ORDER BY row_index").fetchall()
    assert [r[0] for r in rows] == ["correct", "decision_miss", "retrieval_miss", "decision_miss"]
    assert rows[0][1] == ["a", "b"]
    assert rows[0][2] == pytest.approx([1 / np.linalg.norm([1, .5, 0, -.2]), .5 / np.linalg.norm([1, .5, 0, -.2])])


def test_t7_5_accuracy_on_recalled_is_absent_when_nothing_was_recalled(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    rows = [("r1", "en", "c"), ("r2", "de", "a")]
    queries = {"r1": [1, 0.5, 0, 0], "r2": [1, 0.5, 0, 0]}
    rid = execute(wh, ShortlistOptions(_dataset(tmp_path, rows), k=2, run_id="x"),
                  runner=PreferenceRunnerDouble({"r1": ["a"], "r2": ["a"]}),
                  embed=ScriptedEmbedderDouble(queries), embedder_id="e").run_id
    doc = _report(wh, rid)
    en = doc["slices"]["language"]["en"]
    assert en["shortlist_recall_at_k"] == 0.0 and "shortlist_accuracy_on_recalled" not in en
    assert doc["extensions"]["slices"]["language"]["en"]["shortlist_accuracy_on_recalled"]["reason"] \
        == "no_applicable_case"
    assert doc["overall"]["shortlist_accuracy_on_recalled"] == 1.0


def test_logits_of_the_narrowed_question_are_stored_in_the_original_option_order(tmp_path):
    wh, rid, _, _ = _t75(tmp_path, logits=True)
    logits = connect(wh, [rid]).execute("SELECT logits FROM cases WHERE row_index = 0").fetchone()[0]
    assert logits == [0.0, 1.0, None, None]


def test_the_shortlist_sql_re_derives_from_the_store_as_docs_shortlist_md_says(tmp_path):
    """docs/shortlist.md's plain-DuckDB query gives the report's numbers (T7.5), no model loaded."""
    wh, rid, _, _ = _t75(tmp_path)
    text = (ROOT / "docs" / "shortlist.md").read_text(encoding="utf-8")
    query = text.split("```sql\n", 1)[1].split("```", 1)[0]
    con = duckdb.connect()
    got = con.execute(query.replace("warehouse/", str(wh.root) + "/")).fetchall()
    assert ("t75", None, 4, 0.75, 1 / 3) in got
    assert ("t75", "de", 2, 0.5, 0.0) in got and ("t75", "en", 2, 1.0, 0.5) in got


# ---------------------------------------------------------------------------- S7.18
def test_ties_keep_the_earlier_label_and_scores_are_signed():
    body = {"type": "choice", "instructions": "i", "criteria": LABELS}
    embed = ScriptedEmbedderDouble({"s": [-0.5, 0.3, 0.3, -0.5]})
    ranked = retrieval.rank("s", body, embed, 3)
    assert ranked.labels == ["b", "c", "a"] and not ranked.passthrough
    assert ranked.scores[2] < 0 and ranked.scores[0] == ranked.scores[1]


@pytest.mark.slow
def test_passthrough_when_k_reaches_n_calls_no_embedder(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=4, run_id="p"),
                  runner=PreferenceRunnerDouble(T75_PREFS), embed=RefusingEmbedderDouble(),
                  embedder_id="e").run_id
    rows = connect(wh, [rid]).execute("SELECT shortlist_labels, shortlist_scores FROM cases").fetchall()
    assert rows and all(r == (LABELS, None) for r in rows)
    assert _report(wh, rid)["overall"]["shortlist_recall_at_k"] == 1.0


def test_an_answer_outside_the_shortlist_is_an_error_and_nothing_is_committed(tmp_path):
    class OutsideDouble(PreferenceRunnerDouble):
        def predict_batch(self, states, questions, **kwargs):
            return [{"answers": {"intent": {"type": "choice", "choice": "d", "probabilities": {"d": 1.0}}}}
                    for _ in states]

    from laya_cases.run.inference import RunnerCrash

    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(RunnerCrash, match="outside the shortlist"):
        execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=2, run_id="o"),
                runner=OutsideDouble({}), embed=ScriptedEmbedderDouble(T75_QUERIES), embedder_id="e")
    assert not wh.has_run("o")


@pytest.mark.parametrize("rows, message", [
    ([("r1", "en", "z")], "row 0 question 'intent': expected label 'z' is not in criteria"),
    ([("r1", "en", True)], "expected label True is not in criteria"),
])
def test_s7_17_setup_is_checked_before_anything_loads(tmp_path, rows, message):
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        execute(wh, ShortlistOptions(_dataset(tmp_path, rows), k=2), runner=PreferenceRunnerDouble({}),
                embed=RefusingEmbedderDouble(), embedder_id="e")
    with pytest.raises(UsageError, match="--k must be an integer >= 1"):
        execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=0), runner=PreferenceRunnerDouble({}),
                embed=RefusingEmbedderDouble(), embedder_id="e")
    assert connect(wh).execute("SELECT count(*) FROM runs").fetchone()[0] == 0


# ---------------------------------------------------------------------------- T7.6
T76_ROWS = [("r1", "en", "a"), ("r2", "en", "c"), ("r3", "de", "b"), ("r4", "de", "a")]
T76_PREFS = {"r1": ["a"], "r2": ["c"], "r3": ["a", "c"], "r4": ["c", "a"]}


def test_t7_6_tournament_survival_and_accuracy_on_survivors(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    runner = PreferenceRunnerDouble(T76_PREFS)
    rid = execute(wh, ShortlistOptions(_dataset(tmp_path, T76_ROWS), tournament=True, group_size=2,
                                       run_id="t76"), runner=runner).run_id
    doc = _report(wh, rid)
    assert doc["overall"]["tournament_survival_rate"] == 0.75
    assert doc["overall"]["tournament_accuracy_on_survivors"] == 2 / 3
    assert "shortlist_recall_at_k" not in doc["overall"]
    config = doc["config"]
    assert config["schema"] == "laya-tournament-evals-report/1" and config["tournament_group_size"] == 2
    assert config["tournament"]["counts"] == {"correct": 2, "elimination_miss": 1, "final_choice_miss": 1}
    statuses = connect(wh, [rid]).execute("SELECT shortlist_status, shortlist_labels FROM cases "
                                         "ORDER BY row_index").fetchall()
    assert statuses == [("correct", ["a", "c"]), ("correct", ["a", "c"]), ("elimination_miss", ["a", "c"]),
                        ("final_choice_miss", ["a", "c"])]
    # round 1 asks both groups in one call, then the finalists
    assert [sorted(map(tuple, (list(b["criteria"]) for b in q.values()))) for q in runner.asked[:2]] == \
        [[("a", "b"), ("c", "d")], [("a", "c")]]


def test_groups_are_near_equal_and_in_order():
    assert retrieval.groups(list("abcdefghij"), 4) == [list("abc"), list("def"), list("ghij")]
    assert retrieval.groups(list("ab"), 2) == [list("ab")]


# ---------------------------------------------------------------------------- comparability
def test_comparability_needs_equal_k_and_group_size():
    base = {"schema": "laya-shortlist-evals-report/1", "shortlist": {"k": 10}}
    assert comparability_reasons(dict(base), {"config": dict(base)}) == []
    reasons = comparability_reasons(dict(base, shortlist={"k": 20}), {"config": base})
    assert reasons == ["shortlist k: baseline is 10, this run is 20"]
    t = {"schema": "laya-tournament-evals-report/1", "tournament_group_size": 16}
    assert comparability_reasons(dict(t, tournament_group_size=8), {"config": t}) == \
        ["tournament group size: baseline is 16, this run is 8"]
    plain = {"schema": "laya-evals-report/1"}
    assert comparability_reasons(plain, {"config": base})[0].startswith("schema (report schema)")


def test_an_ordinary_run_gets_no_shortlist_metric(tmp_path):
    from doubles import ExplodingRunnerDouble
    from laya_cases.run.execute import execute as run_execute
    from laya_cases.run.options import RunOptions

    wh = Warehouse(tmp_path / "wh")
    path = _dataset(tmp_path, [("money r1", "en", "a")])
    rid = run_execute(wh, RunOptions(path, run_id="plain"), runner=ExplodingRunnerDouble()).run_id
    doc = _report(wh, rid)
    assert not [m for m in doc["overall"] if m.startswith(("shortlist", "tournament"))]
    assert doc["config"]["schema"] == "laya-evals-report/1"
    assert json.dumps(doc["extensions"]).count("shortlist") == 0


# ---------------------------------------------------------------------------- MiniLM on BANKING77 (slow)
@pytest.mark.slow
@needs_shared_data("banking77")
def test_minilm_shortlist_k10_on_banking77_re_derives_from_the_store(tmp_path):
    """The real embedder and decision model (MiniLM, offline) on 20 BANKING77 rows, one per intent;
    then every shortlist number again from the stored rows alone (no model)."""
    from laya_cases.harness.shortlist import banking77

    path = tmp_path / "b77.jsonl"
    assert banking77.write(path, every=40, n_rows=20) == 20
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, ShortlistOptions(str(path), model="minilm", k=10, embedder="minilm", run_id="b77")).run_id
    doc = _report(wh, rid)
    con = connect(wh, [rid])
    rows = con.execute("SELECT expected_json, shortlist_labels, shortlist_scores, correct, shortlist_status "
                       "FROM cases ORDER BY row_index").fetchall()
    assert len(rows) == 20
    recalled = [json.loads(e) in labels for e, labels, _, _, _ in rows]
    assert all(len(labels) == 10 and len(scores) == 10 and scores == sorted(scores, reverse=True)
               for _, labels, scores, _, _ in rows)
    assert doc["overall"]["shortlist_recall_at_k"] == sum(recalled) / 20
    assert doc["overall"]["shortlist_accuracy_on_recalled"] == \
        sum(1 for r, row in zip(recalled, rows) if r and row[3]) / sum(recalled)
    assert doc["overall"]["choice_accuracy"] == sum(1 for row in rows if row[3]) / 20
    assert [s for *_, s in rows] == [("correct" if c else "decision_miss") if r else "retrieval_miss"
                                     for r, (_, _, _, c, _) in zip(recalled, rows)]
    assert doc["config"]["shortlist"]["embedder_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert sum(doc["config"]["shortlist"]["counts"].values()) == 20
    assert doc["overall"]["shortlist_recall_at_k"] >= 0.5           # measured 0.9 (k=10 of 77)


# ---------------------------------------------------------------------------- the command
class _RegisteredPreferenceDouble(PreferenceRunnerDouble):
    name = "preference-double"

    def __init__(self, model=None, **kw):
        super().__init__(T76_PREFS)


def _embedding_double():
    from laya_cases.runners.embedding import EmbeddingRunner

    class ScriptedEmbeddingRunnerDouble(EmbeddingRunner):
        """A registered embedder double: one-hot label vectors, every state prefers a then c."""

        name = "scripted-embedder-double"

        def __init__(self, model=None, device=None, **kw):
            super().__init__()
            self.info = RunnerInfo(runner=self.name, model_id="scripted-embedder-double")

        def _embed(self, texts):
            return np.stack([np.eye(4)[LABELS.index(t)] if t in LABELS else np.array([1.0, 0.0, 0.5, 0.0])
                             for t in texts]).astype(np.float32)

    return ScriptedEmbeddingRunnerDouble


@pytest.fixture
def cli_doubles():
    from laya_cases.runners import registry

    emb = _embedding_double()
    registry.register("preference-double", _RegisteredPreferenceDouble)
    registry.register(emb.name, emb)
    yield
    registry.unregister("preference-double")
    registry.unregister(emb.name)


@pytest.mark.slow
def test_cli_shortlist_and_tournament(tmp_path, cli_doubles):
    import laya_cases_cli.commands  # noqa: F401
    from typer.testing import CliRunner
    from laya_cases_cli.app import app

    ds, wh = _dataset(tmp_path, T76_ROWS), str(tmp_path / "wh")
    res = CliRunner().invoke(app, ["shortlist", ds, "--model", "preference-double", "--k", "2", "--embedder",
                                   "scripted-embedder-double", "--run-id", "s", "-w", wh, "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    assert "shortlist_recall_at_k 0.7500" in res.stdout            # kept [a, c]: the gold b of row 3 is lost
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["config"]["shortlist"]["embedder_id"] == "scripted-embedder-double"
    res = CliRunner().invoke(app, ["shortlist", ds, "--model", "preference-double", "--tournament", "--group-size",
                                   "2", "--run-id", "t", "-w", wh])
    assert res.exit_code == 0 and "tournament_survival_rate 0.7500" in res.stdout, res.output
    for args in (["--tournament", "--embedder", "minilm"], ["--embedder", "preference-double"], ["--k", "0"],
                 ["--tournament", "--group-size", "1"]):
        res = CliRunner().invoke(app, ["shortlist", ds, "--model", "preference-double", "-w", wh] + args)
        assert res.exit_code == 2, (args, res.output)


# ---------------------------------------------------------------------------- differential, latency
def _python_rank(query, k):
    sims = [float(np.clip(np.dot(np.eye(4)[i], query) / (np.linalg.norm(query) or 1.0), -1, 1)) for i in range(4)]
    return [LABELS[i] for i in sorted(range(4), key=lambda i: -sims[i])[:k]]        # stable: ties keep the earlier


def _python_tournament(pref, g):
    labels = list(LABELS)
    while len(labels) > g:
        parts = -(-len(labels) // g)
        groups = [labels[i * len(labels) // parts:(i + 1) * len(labels) // parts] for i in range(parts)]
        labels = [next((l for l in pref if l in grp), grp[0]) for grp in groups]
    return labels


@pytest.mark.parametrize("seed", [1, *(pytest.param(s, marks=pytest.mark.slow) for s in (2, 3))])
@pytest.mark.parametrize("tournament", [False, True])
def test_statuses_and_every_slice_metric_against_plain_python(tmp_path, seed, tournament):
    rng = random.Random(seed)
    n = 40
    rows = [("s%d" % i, rng.choice(["en", "de", "fr"]), rng.choice(LABELS)) for i in range(n)]
    tags = {s: rng.sample(["x", "y", "z"], rng.randint(0, 2)) for s, _, _ in rows}
    prefs = {s: rng.sample(LABELS, 4) for s, _, _ in rows}
    queries = {s: [rng.choice([-0.5, 0.0, 0.5, 1.0]) for _ in LABELS] for s, _, _ in rows}     # ties on purpose
    path = tmp_path / "ds.jsonl"
    write_jsonl(path, [{"state": s, "language": lang, "tags": tags[s], "questions": {"intent": {
        "type": "choice", "instructions": "Which intent?", "criteria": LABELS}}, "expected": {"intent": gold}}
        for s, lang, gold in rows])
    k, g = rng.randint(1, 3), 2
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, ShortlistOptions(str(path), k=k, tournament=tournament, group_size=g, run_id="r"),
                  runner=PreferenceRunnerDouble(prefs), embed=ScriptedEmbedderDouble(queries),
                  embedder_id="e").run_id
    status = {}
    for s, _, gold in rows:
        kept = _python_tournament(prefs[s], g) if tournament else _python_rank(queries[s], k)
        pick = next(l for l in prefs[s] if l in kept)
        status[s] = ("elimination_miss" if tournament else "retrieval_miss") if gold not in kept else \
            "correct" if pick == gold else ("final_choice_miss" if tournament else "decision_miss")
    names = (("tournament_survival_rate", "tournament_accuracy_on_survivors") if tournament
             else ("shortlist_recall_at_k", "shortlist_accuracy_on_recalled"))
    miss = "elimination_miss" if tournament else "retrieval_miss"
    groups = {("overall", ""): [s for s, _, _ in rows]}
    for s, lang, _ in rows:
        groups.setdefault(("language", lang), []).append(s)
        groups.setdefault(("qid", "intent"), []).append(s)
        for t in tags[s]:
            groups.setdefault(("tag", t), []).append(s)
    doc = _report(wh, rid)
    for (dim, key), members in groups.items():
        got = doc["overall"] if dim == "overall" else doc["slices"][dim][key]
        kept = [s for s in members if status[s] != miss]
        assert got[names[0]] == len(kept) / len(members), (dim, key)
        if kept:
            assert got[names[1]] == sum(status[s] == "correct" for s in kept) / len(kept), (dim, key)
        else:
            assert names[1] not in got
    stored = dict(connect(wh, [rid]).execute("SELECT row_index, shortlist_status FROM cases").fetchall())
    assert [stored[i] for i in range(n)] == [status[s] for s, _, _ in rows]


def test_latency_includes_the_embedding(tmp_path):
    from doubles import FakeClock

    clock = FakeClock()

    class SlowEmbedderDouble(ScriptedEmbedderDouble):
        def __call__(self, texts):
            clock.advance_ms(50.0)
            return super().__call__(texts)

    class SlowRunnerDouble(PreferenceRunnerDouble):
        def predict_batch(self, states, questions, **kwargs):
            clock.advance_ms(10.0)
            return super().predict_batch(states, questions)

    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, ShortlistOptions(_dataset(tmp_path, T75_ROWS), k=2, run_id="lat"),
                  runner=SlowRunnerDouble(T75_PREFS), embed=SlowEmbedderDouble(T75_QUERIES), embedder_id="e",
                  clock=clock).run_id
    assert _report(wh, rid)["overall"]["latency_p50_ms"] == pytest.approx(60.0)


# ---------------------------------------------------------------------------- the report's cases (issue 29 item 4)
def _reference_rounds(n: int, g: int) -> int:
    """laya.shortlist.predict_tournament's loop: groups of ceil(m / g), one winner each, while m > g."""
    labels, rounds = list(range(n)), 0
    while True:
        parts = -(-len(labels) // g)
        if parts <= 1:
            return rounds
        labels = [labels[i * len(labels) // parts] for i in range(parts)]
        rounds += 1


@pytest.mark.parametrize("tournament", [False, True])
def test_case_fields_sql_on_random_label_counts(tournament):
    """sql/shortlist/case_fields.sql over a hand-made store: n, passthrough (k >= n) and the tournament's
    rounds for label counts 1..70 and group sizes 2..9 against the reference's loop; a case without
    shortlist labels gets no row."""
    from laya_cases.query import sql as sqlfiles

    rng = random.Random(4)
    con = duckdb.connect()
    sqlfiles.prepare_connection(con)
    k, g = rng.randint(1, 40), rng.randint(2, 9)
    config = ({"schema": "laya-tournament-evals-report/1", "tournament": {"group_size": g}} if tournament
              else {"schema": "laya-shortlist-evals-report/1", "shortlist": {"k": k}})
    con.execute("CREATE TABLE runs AS SELECT 'r' AS run_id, ? AS config_json", [json.dumps(config)])
    cases = [(i, 0, ["o%d" % j for j in range(n)], None if i % 9 == 0 else ["o0"], [0.5], "correct")
             for i, n in enumerate(rng.randint(1, 70) for _ in range(120))]
    con.execute("CREATE TABLE cases (run_id VARCHAR, row_index BIGINT, qid_pos BIGINT, options VARCHAR[], "
                "shortlist_labels VARCHAR[], shortlist_scores DOUBLE[], shortlist_status VARCHAR)")
    con.executemany("INSERT INTO cases VALUES ('r', ?, ?, ?, ?, ?, ?)", cases)
    got = {r: json.loads(f) for r, _, f in sqlfiles.query(con, "shortlist/case_fields.sql", {"run_id": "r"}).fetchall()}
    assert set(got) == {c[0] for c in cases if c[3] is not None}
    for i, _, options, _, _, _ in cases:
        if i in got:
            n = len(options)
            meta = got[i]["tournament" if tournament else "shortlist"]
            assert meta["n"] == n and meta["labels"] == ["o0"]
            if tournament:
                assert meta["rounds"] == _reference_rounds(n, g) and got[i]["tournament_status"] == "correct"
            else:
                assert meta["passthrough"] == (k >= n) and meta["k"] == k and meta["scores"] == [0.5]


@pytest.mark.slow
@pytest.mark.parametrize("tournament", [False, True])
def test_report_cases_carry_the_shortlist_fields_and_rederive_every_shortlist_number(tmp_path, tournament):
    """Each case of the report JSON has the reference's `shortlist` {k, labels, n, passthrough, scores} and
    `shortlist_status` (a tournament: `tournament` {labels, n, rounds}, `tournament_status`), equal to a
    plain-Python shortlist / tournament; the report's metrics overall and per slice, and the config's counts,
    are the reference's `_metrics` (laya.evals_shortlist / evals_tournament, copied: importing them loads
    torch) over those cases alone, grouped by the reference's own _group_cases; the streamed JSON is the
    document's bytes."""
    import io

    from laya_cases.report import stream as RJ

    _group_cases = pytest.importorskip("laya.evals")._group_cases
    mode, status = ("tournament", "tournament_status") if tournament else ("shortlist", "shortlist_status")
    lost, kept_name, right_name = (("elimination_miss", "tournament_survival_rate", "tournament_accuracy_on_survivors")
                                   if tournament else
                                   ("retrieval_miss", "shortlist_recall_at_k", "shortlist_accuracy_on_recalled"))

    def metric_of(cases: List[Dict[str, Any]]) -> Dict[str, float]:
        kept = sum(c[status] != lost for c in cases)
        correct = sum(c[status] == "correct" for c in cases)
        return dict({kept_name: kept / len(cases)}, **({right_name: correct / kept} if kept else {}))

    rng = random.Random(11)
    rows = [("s%d" % i, rng.choice(["en", "de", None]), rng.choice(LABELS)) for i in range(30)]
    tags = {s: rng.sample(["x", "y"], rng.randint(0, 2)) for s, _, _ in rows}
    prefs = {s: rng.sample(LABELS, 4) for s, _, _ in rows}
    queries = {s: [rng.choice([-0.5, 0.0, 0.5, 1.0]) for _ in LABELS] for s, _, _ in rows}     # ties on purpose
    path = tmp_path / "ds.jsonl"
    write_jsonl(path, [dict({"state": s, "tags": tags[s], "questions": {"intent": {
        "type": "choice", "instructions": "Which intent?", "criteria": LABELS}}, "expected": {"intent": gold}},
        **({"language": lang} if lang else {})) for s, lang, gold in rows])
    k, g = 2, 3
    wh = Warehouse(tmp_path / "wh")
    rid = execute(wh, ShortlistOptions(str(path), k=k, tournament=tournament, group_size=g, run_id="r"),
                  runner=PreferenceRunnerDouble(prefs), embed=ScriptedEmbedderDouble(queries),
                  embedder_id="e").run_id
    doc = R.build(connect(wh, [rid]), rid, R.Options())
    out = io.StringIO()
    RJ.write(out, dict(doc, cases=[]), connect(wh, [rid]), rid)
    assert out.getvalue() == R.dumps(doc)
    assert len(doc["cases"]) == len(rows)
    for (s, _, gold), case in zip(rows, doc["cases"]):
        assert case["expected"] == gold and case[status] in (
            ("correct", "elimination_miss", "final_choice_miss") if tournament else
            ("correct", "retrieval_miss", "decision_miss"))
        assert (case[status] == lost) == (gold not in case[mode]["labels"])
        assert (case[status] == "correct") == (case["answer"]["choice"] == gold)
        meta = case[mode]
        if tournament:
            assert meta == {"labels": _python_tournament(prefs[s], g), "n": 4, "rounds": 1}
        else:
            q = np.array(queries[s])
            sims = [float(np.clip(q[i] / (np.linalg.norm(q) or 1.0), -1, 1)) for i in range(4)]
            assert meta == {"k": k, "labels": _python_rank(queries[s], k), "n": 4, "passthrough": False,
                            "scores": [sims[LABELS.index(l)] for l in meta["labels"]]}
    assert {m: doc["overall"][m] for m in metric_of(doc["cases"])} == metric_of(doc["cases"])
    for dim in ("language", "model", "qid", "tag"):
        for key, group in _group_cases(doc["cases"], dim).items():
            mine = {m: v for m, v in doc["slices"][dim][key].items() if m.startswith(mode)}
            assert mine == metric_of(group), (dim, key)
    counts = doc["config"][mode]["counts"]
    assert counts == {s: sum(c[status] == s for c in doc["cases"]) for s in counts}
    assert json.loads(out.getvalue())["cases"][0][mode]["labels"] == doc["cases"][0][mode]["labels"]
    if not tournament:                       # docs/shortlist.md's Python block, run as written on this document
        import re

        (tmp_path / "b77.json").write_text(out.getvalue(), encoding="utf-8")
        text = (ROOT / "docs" / "shortlist.md").read_text(encoding="utf-8")
        snippet, = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
        scope: Dict[str, Any] = {}
        exec(snippet.replace('"b77.json"', repr(str(tmp_path / "b77.json"))), scope)     # noqa: S102
        assert scope["recalled"]
