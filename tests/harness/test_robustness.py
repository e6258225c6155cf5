"""Metamorphic robustness (issue 11 items 1, 2, 4; spec S7.13-S7.16): orders, canonicalisation, pair and
group metrics (T7.3, T7.4), scripted runners, the command, failed languages, gates, report isolation."""
from __future__ import annotations

import json
import math
import random
from typing import Any, Dict, List

import duckdb
import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import needs_shared_data, write_jsonl
from laya_cases.query import sql as sqlfiles
from laya_cases.harness.robustness import variants as V
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo
from laya_cases.store.warehouse import Warehouse
from laya_cases_cli.app import app
from laya_cases.query.sql import connect

T73_20 = [2, 0, 13, 10, 16, 4, 18, 5, 17, 12, 7, 19, 8, 9, 6, 14, 11, 15, 3, 1]


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def strict_loads(text: str) -> Any:
    def refuse(token):
        raise AssertionError("non-strict JSON token %s" % token)
    return json.loads(text, parse_constant=refuse)


# ------------------------------------------------------------------------------- test doubles
def _weights_answer(qid: str, keys: List[str], weights: List[float]) -> Dict[str, Any]:
    total = sum(weights)
    probs = [w / total for w in weights]
    best = max(range(len(keys)), key=lambda i: (probs[i], -i))
    return {qid: {"type": "choice", "choice": keys[best], "probabilities": dict(zip(keys, probs)),
                  "answer_confidence": probs[best]}}


class PositionRunnerDouble(Runner):
    """Answers by slot only: slot j gets weight n - j, so the first presented option always wins."""

    name = "position-double"
    capabilities = Capabilities()

    def __init__(self, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="position-double", revision="0" * 40)

    def predict_batch(self, states, questions, **kwargs):
        (qid, body), = questions.items()
        keys = list(body["criteria"])
        return [{"answers": _weights_answer(qid, keys, [float(len(keys) - j) for j in range(len(keys))])}
                for _ in states]


class ContentRunnerDouble(PositionRunnerDouble):
    """Order- and label-invariant: an option's weight depends on its description and the state only.
    A state containing BOOM raises; one containing NAN answers a NaN probability."""

    name = "content-double"

    def predict_batch(self, states, questions, **kwargs):
        (qid, body), = questions.items()
        keys = list(body["criteria"])
        out = []
        for state in states:
            text = json.dumps(state)
            if "BOOM" in text:
                raise RuntimeError("runner exploded")
            weights = [1.0 + (sum(map(ord, str(d) + text)) % 7) for d in body["criteria"].values()]
            answer = _weights_answer(qid, keys, weights)
            if "NAN" in text:
                answer[qid]["probabilities"][keys[0]] = math.nan
            out.append({"answers": answer})
        return out


@pytest.fixture(autouse=True)
def doubles():
    registry.register("position-double", PositionRunnerDouble)
    registry.register("content-double", ContentRunnerDouble)
    yield
    registry.unregister("position-double")
    registry.unregister("content-double")


def dataset(tmp_path, n_rows=200, n_opts=4, languages=("en", "de"), name="ds.jsonl", states=None):
    rows = []
    for i in range(n_rows):
        keys = ["opt_%d" % j for j in range(n_opts)]
        rows.append({"state": {"utterance": states[i] if states else "utterance %d" % i},
                     "questions": {"intent": {"type": "choice", "instructions": "Which one?",
                                              "criteria": {k: "description of %s" % k for k in keys}}},
                     "expected": {"intent": keys[(i * 7) % n_opts]},
                     "language": languages[i % len(languages)]})
    return write_jsonl(tmp_path / name, rows)


# ------------------------------------------------------------------------------- S7.13 orders
def test_t73_orders():
    s = V.case_seeds(13, 1)[0]
    assert V.option_order(s, 20) == T73_20
    assert V.option_order(s, 4) == [2, 1, 3, 0]


def test_identity_shuffle_becomes_a_rotation():
    seen = {tuple(V.option_order(s, 2)) for s in V.case_seeds(13, 50)}
    assert seen == {(1, 0)}              # half the shuffles of 2 are the identity; every one is rotated
    for s in V.case_seeds(7, 200):
        order = V.option_order(s, 3)
        assert sorted(order) == [0, 1, 2] and order != [0, 1, 2]


def test_label_rename_keys_and_bodies():
    assert V.renamed_keys(3) == ["A", "B", "C"]
    assert V.renamed_keys(26)[-1] == "Z"
    assert V.renamed_keys(27) == ["key_%d" % i for i in range(27)]
    body = {"type": "choice", "instructions": "x", "criteria": {"x": "ex", "y": "why", "z": "zed"}}
    base, order, rename = V.variants(list(body["criteria"]), V.case_seeds(13, 1)[0])
    assert base.body(body) == body
    assert order.slot_order == V.option_order(V.case_seeds(13, 1)[0], 3)
    assert list(order.body(body)["criteria"]) == [["x", "y", "z"][i] for i in order.slot_order]
    assert rename.slot_order == [0, 1, 2]
    assert rename.body(body)["criteria"] == {"A": "ex", "B": "why", "C": "zed"}


# ------------------------------------------------------------------------------- S7.14
def test_canonicalisation_maps_back_and_refuses_non_distributions():
    variant = V.Variant("option_order", [2, 0, 1], ["x", "y", "z"])
    answer = {"probabilities": {"z": 0.5, "x": 0.3, "y": 0.2}}
    assert V.canonical_vector(answer, variant) == [0.3, 0.2, 0.5]
    canon = V.canonical_answer(dict(answer, confidence=0.1), variant, ["x", "y", "z"])
    assert canon["choice"] == "z" and canon["answer_confidence"] == 0.5 and canon["confidence"] == 0.1
    tie = V.canonical_answer({"probabilities": {"z": 0.4, "x": 0.4, "y": 0.2}}, variant, ["x", "y", "z"])
    assert tie["choice"] == "x"                                  # the first canonical index of the maximum
    assert V.canonical_logits([3.0, 1.0, 2.0], variant) == [1.0, 2.0, 3.0]
    for bad in ({"z": math.nan, "x": 0.5, "y": 0.5}, {"z": 1.2, "x": -0.2, "y": 0.0},
                {"z": 0.5, "x": 0.3, "y": 0.1}, {"z": 0.5, "x": 0.5}, {"z": 0.5, "x": 0.5, "y": "0"},
                {"z": 0.300002, "x": 0.3, "y": 0.4}):
        with pytest.raises(V.NotADistribution):
            V.canonical_vector({"probabilities": bad}, variant)
    # four-decimal answers (S2.4) may miss 1 by up to n * 0.5e-4
    assert V.canonical_vector({"probabilities": {"z": 0.3333, "x": 0.3333, "y": 0.3333}}, variant)


# ------------------------------------------------------------------------------- S7.15 / S7.16 in SQL
def pair_tables(pairs: List[tuple], language="en"):
    """A `cases` table of baseline/variant rows -> the connection with robustness_pairs and groups."""
    con = duckdb.connect()
    sqlfiles.prepare_connection(con)
    rows = []
    for i, (kind, p, q) in enumerate(pairs):
        rows.append(("r", "b%d" % i, None, "baseline", language, i, p))
        rows.append(("r", "b%d/%s" % (i, kind), "b%d" % i, kind, language, i, q))
    con.execute("CREATE TABLE cases (run_id VARCHAR, case_id VARCHAR, parent_case_id VARCHAR, variant VARCHAR, "
                "language_key VARCHAR, row_index BIGINT, probabilities DOUBLE[])")
    con.executemany("INSERT INTO cases VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    sqlfiles.materialize(con, "robustness/pairs.sql", "robustness_pairs", {"run_id": "r", "failed": []})
    sqlfiles.materialize(con, "robustness/groups.sql", "robustness_groups")
    return con


def py_pair(p, q):
    """S7.15 in pure Python, as pairs.sql documents it (fsum sums)."""
    n = len(p)
    drift = [abs(a - b) for a, b in zip(p, q)]
    terms = []
    for a, b in zip(p, q):
        m = (a + b) / 2.0
        terms += [0.5 * a * math.log(a / m) if a > 0 else 0.0, 0.5 * b * math.log(b / m) if b > 0 else 0.0]
    return {"agree": p.index(max(p)) == q.index(max(q)), "mean_drift": math.fsum(drift) / n,
            "max_drift": max(drift), "js": max(0.0, math.fsum(terms)), "confidence_drift": max(q) - max(p)}


def test_t74_pairs_and_group():
    con = pair_tables([("option_order", [0.91, 0.06, 0.03], [0.88, 0.08, 0.04]),
                       ("label_rename", [0.5, 0.4, 0.1], [0.3, 0.6, 0.1])])
    a, b = sqlfiles.rows(con.execute("SELECT * FROM robustness_pairs ORDER BY row_index"))
    assert a["agree"] is True and b["agree"] is False
    assert a["mean_drift"] == pytest.approx(0.02, abs=5e-7) and a["max_drift"] == pytest.approx(0.03, abs=1e-15)
    assert round(a["js"], 6) == 0.001201 and a["confidence_drift"] == pytest.approx(-0.03, abs=1e-15)
    assert round(b["mean_drift"], 6) == 0.133333 and b["max_drift"] == pytest.approx(0.2, abs=1e-15)
    assert round(b["js"], 6) == 0.022701 and b["confidence_drift"] == 0.09999999999999998
    for row, (p, q) in zip((a, b), (([0.91, 0.06, 0.03], [0.88, 0.08, 0.04]), ([0.5, 0.4, 0.1], [0.3, 0.6, 0.1]))):
        assert {k: row[k] for k in py_pair(p, q)} == py_pair(p, q)          # bit for bit
    overall = sqlfiles.rows(con.execute(
        "SELECT * FROM robustness_groups WHERE scope = 'all' AND kind = 'overall'"))[0]
    assert overall["n"] == 2 and overall["semantic_agreement_rate"] == 0.5
    assert round(overall["mean_probability_drift"], 7) == 0.0766667 and overall["max_probability_drift"] == 0.2
    assert round(overall["mean_js_divergence"], 7) == 0.0119511
    assert overall["mean_confidence_drift"] == pytest.approx(0.035, abs=1e-15)
    assert overall["mean_absolute_confidence_drift"] == pytest.approx(0.065, abs=1e-15)
    assert overall["worst_confidence_increase_on_disagreement"] == 0.09999999999999998
    per_kind = {r["kind"]: r for r in sqlfiles.rows(con.execute("SELECT * FROM robustness_groups WHERE scope = 'all'"))}
    assert per_kind["option_order"]["n"] == 1 and per_kind["option_order"]["worst_confidence_increase_on_disagreement"] == 0.0
    assert per_kind["label_rename"]["semantic_agreement_rate"] == 0.0
    languages = {r["language"] for r in sqlfiles.rows(con.execute("SELECT * FROM robustness_groups WHERE scope = 'language'"))}
    assert languages == {"en"}


def test_worst_increase_is_zero_when_every_disagreement_lowers_confidence():
    con = pair_tables([("option_order", [0.6, 0.4], [0.45, 0.55])])
    row = sqlfiles.rows(con.execute("SELECT * FROM robustness_groups WHERE scope = 'all' AND kind = 'overall'"))[0]
    assert row["n_disagree"] == 1 and row["worst_confidence_increase_on_disagreement"] == 0.0


def _random_distribution(rng: random.Random, n: int) -> List[float]:
    if rng.random() < 0.3:                 # ties and zeros: multiples of 1/8 that sum to 1
        cuts = sorted(rng.randrange(9) for _ in range(n - 1))
        return [(b - a) / 8.0 for a, b in zip([0] + cuts, cuts + [8])]
    w = [rng.random() ** 3 for _ in range(n)]
    return [x / sum(w) for x in w]


@pytest.mark.slow
def test_pair_metrics_against_numpy_on_random_distributions():
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    pairs = []
    for i in range(300):
        n = rng.randrange(2, 12)
        pairs.append((("option_order", "label_rename")[i % 2], _random_distribution(rng, n), _random_distribution(rng, n)))
    con = pair_tables(pairs)
    got = sqlfiles.rows(con.execute("SELECT * FROM robustness_pairs ORDER BY row_index"))
    assert len(got) == len(pairs)
    for row, (_, p, q) in zip(got, pairs):
        P, Q = np.array(p), np.array(q)
        M = (P + Q) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            js = 0.5 * np.where(P > 0, P * np.log(P / M), 0).sum() + 0.5 * np.where(Q > 0, Q * np.log(Q / M), 0).sum()
        assert row["agree"] == (int(np.argmax(P)) == int(np.argmax(Q)))
        assert row["mean_drift"] == pytest.approx(float(np.abs(P - Q).mean()), rel=1e-12, abs=1e-15)
        assert row["max_drift"] == float(np.abs(P - Q).max())
        assert row["js"] == pytest.approx(max(0.0, float(js)), rel=1e-9, abs=1e-15)
        assert row["confidence_drift"] == float(Q.max() - P.max())
        assert {k: row[k] for k in py_pair(p, q)} == py_pair(p, q)
    groups = {r["kind"]: r for r in sqlfiles.rows(con.execute("SELECT * FROM robustness_groups WHERE scope = 'all'"))}
    for kind, members in (("overall", got), ("option_order", got[0::2]), ("label_rename", got[1::2])):
        g = groups[kind]
        drifts = np.array([r["confidence_drift"] for r in members])
        agree = np.array([r["agree"] for r in members])
        assert g["n"] == len(members) and g["semantic_agreement_rate"] == agree.mean()
        assert g["mean_probability_drift"] == math.fsum(r["mean_drift"] for r in members) / len(members)
        assert g["mean_js_divergence"] == pytest.approx(np.mean([r["js"] for r in members]), rel=1e-12)
        assert g["mean_absolute_confidence_drift"] == pytest.approx(np.abs(drifts).mean(), rel=1e-12)
        assert g["max_probability_drift"] == max(r["max_drift"] for r in members)
        worst = max([0.0] + list(drifts[~agree]))
        assert g["worst_confidence_increase_on_disagreement"] == worst


# ------------------------------------------------------------------------------- the command
def run_robustness(tmp_path, ds, model, run_id, *extra):
    out = tmp_path / ("%s.json" % run_id)
    result = invoke("robustness", ds, "--model", model, "--run-id", run_id, "-w", tmp_path / "wh", "--json", out,
                    *extra)
    doc = strict_loads(out.read_text(encoding="utf-8")) if out.exists() else None
    return result, doc


def test_position_runner_agrees_one_in_n_on_order_and_always_on_labels(tmp_path):
    ds = dataset(tmp_path, n_rows=400, n_opts=4)
    result, doc = run_robustness(tmp_path, ds, "position-double", "pos")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    summary = doc["summary"]
    # the first presented option wins, so option_order agrees exactly when order[0] == 0
    by_language = {"en": V.case_seeds(13, 200), "de": V.case_seeds(13, 200)}
    expected = sum(V.option_order(s, 4)[0] == 0 for seeds in by_language.values() for s in seeds) / 400
    assert summary["option_order"]["semantic_agreement_rate"] == expected
    assert abs(expected - 1 / 4) < 0.05
    assert summary["label_rename"]["semantic_agreement_rate"] == 1.0
    assert summary["label_rename"]["max_probability_drift"] == 0.0 and summary["label_rename"]["n"] == 400
    assert summary["overall"]["n"] == 800
    assert set(doc["languages"]) == {"en", "de"} and doc["languages"]["en"]["option_order"]["n"] == 200
    quality = summary["quality"]
    assert quality["baseline"]["n_labelled"] == 400 and set(quality["baseline"]) == {"n_labelled", "accuracy", "ece"}
    assert "option_order  " in result.stdout and "by language" in result.stdout


def test_order_invariant_runner_agrees_always(tmp_path):
    ds = dataset(tmp_path, n_rows=60, n_opts=5)
    result, doc = run_robustness(tmp_path, ds, "content-double", "inv")
    assert result.exit_code == 0, result.stderr
    for group in ("option_order", "label_rename", "overall"):
        assert doc["summary"][group]["semantic_agreement_rate"] == 1.0
        assert doc["summary"][group]["max_probability_drift"] == 0.0
        assert doc["summary"][group]["worst_confidence_increase_on_disagreement"] == 0.0
    q = doc["summary"]["quality"]
    assert q["baseline"] == q["option_order"] == q["label_rename"]


def test_rows_are_stored_canonical_with_both_mappings(tmp_path):
    ds = dataset(tmp_path, n_rows=6, n_opts=27, languages=("en",))
    result, _ = run_robustness(tmp_path, ds, "position-double", "rows")
    assert result.exit_code == 0, result.stderr
    con = connect(Warehouse(tmp_path / "wh"), ["rows"], variants=True)
    rows = sqlfiles.rows(con.execute("SELECT * FROM cases ORDER BY row_index, variant"))
    assert len(rows) == 18
    keys = ["opt_%d" % j for j in range(27)]
    seeds = V.case_seeds(13, 6)
    for row in rows:
        assert row["options"] == keys and abs(math.fsum(row["probabilities"]) - 1.0) < 1e-9
        if row["variant"] == "baseline":
            assert row["parent_case_id"] is None and row["slot_order"] == list(range(27))
            continue
        assert row["parent_case_id"] and row["case_id"] == "%s/%s" % (row["parent_case_id"], row["variant"])
        if row["variant"] == "option_order":
            order = V.option_order(seeds[row["row_index"]], 27)
            assert row["slot_order"] == order and row["presented_labels"] == keys
            assert row["predicted"] == keys[order[0]]              # slot 0 won, mapped back to its key
            assert json.loads(row["answer_json"])["choice"] == keys[order[0]]
        else:
            assert row["slot_order"] == list(range(27)) and row["presented_labels"] == ["key_%d" % i for i in range(27)]
            assert json.loads(row["answer_json"])["choice"] == "key_0" and row["predicted"] == "opt_0"


@pytest.mark.slow
def test_report_of_a_robustness_run_is_the_plain_runs_report(tmp_path):
    ds = dataset(tmp_path, n_rows=40, n_opts=4)
    wh = tmp_path / "wh"
    assert invoke("run", ds, "--model", "position-double", "--run-id", "plain", "-w", wh).exit_code == 0
    result, _ = run_robustness(tmp_path, ds, "position-double", "rob")
    assert result.exit_code == 0
    plain, rob = tmp_path / "plain.report.json", tmp_path / "rob.report.json"
    assert invoke("report", "plain", "-w", wh, "--json", plain, "--slice", "language").exit_code == 0
    assert invoke("report", "rob", "-w", wh, "--json", rob, "--slice", "language").exit_code == 0
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (plain, rob))
    timing = lambda d: {k: v for k, v in d.items() if "latency" not in k and "cost" not in k}
    assert timing(a["overall"]) == timing(b["overall"])
    assert [timing(g) for g in a["slices"]["language"].values()] == [timing(g) for g in b["slices"]["language"].values()]
    brief = lambda d: [(c.get("qid"), c.get("correct"), c.get("confidence")) for c in d["cases"]]
    assert len(brief(a)) == 40 and brief(a) == brief(b)
    diff = invoke("diff", "plain", "rob", "-w", wh, "--bootstrap", "100")
    assert diff.exit_code == 0 and "40 compared, 0 only in A, 0 only in B" in diff.stdout


def test_a_failing_language_is_an_error_and_exit_1_while_others_are_kept(tmp_path):
    states = ["BOOM" if i == 5 else ("NAN" if i == 2 else "u%d" % i) for i in range(20)]
    ds = dataset(tmp_path, n_rows=20, n_opts=3, languages=("en", "de"), states=states)
    result, doc = run_robustness(tmp_path, ds, "content-double", "fail")
    assert result.exit_code == 1, result.stderr
    assert "FAIL: robustness: language de failed: RuntimeError: runner exploded" in result.stderr
    assert doc["languages"]["de"] == {"error": "RuntimeError: runner exploded"}
    en = doc["languages"]["en"]
    assert en["option_order"]["n"] == 9 and en["n_errors"] == 3          # row 2: a NaN in each presentation (S7.14)
    assert doc["summary"]["option_order"]["n"] == 9 and doc["failed_languages"] == ["de"]
    again = invoke("robustness", "--run", "fail", "-w", tmp_path / "wh", "--json", tmp_path / "again.json")
    assert again.exit_code == 1 and strict_loads((tmp_path / "again.json").read_text()) == doc


def test_bad_input_is_one_line_exit_2_and_nothing_committed(tmp_path):
    rows = [{"state": "s", "questions": {"a": {"type": "choice", "instructions": "i", "criteria": {"x": "", "y": ""}},
                                         "b": {"type": "noul", "instructions": "i"}},
             "expected": {"a": "x", "b": True}}]
    ds = write_jsonl(tmp_path / "two.jsonl", rows)
    result = invoke("robustness", ds, "--model", "position-double", "-w", tmp_path / "wh")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "exactly one choice question" in result.stderr
    assert not (tmp_path / "wh" / "runs").exists()
    plain = invoke("run", dataset(tmp_path, n_rows=3), "--model", "position-double", "--run-id", "p", "-w", tmp_path / "wh")
    assert plain.exit_code == 0
    result = invoke("robustness", "--run", "p", "-w", tmp_path / "wh")
    assert result.exit_code == 2 and "not a robustness run" in result.stderr


# ------------------------------------------------------------------------------- gates
@pytest.mark.slow
def test_gate_policy_per_language(tmp_path):
    ds = dataset(tmp_path, n_rows=80, n_opts=4)
    policy = write_jsonl(tmp_path / "p.json", [])
    policy.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"language": "*"}, "metric": "option_order.semantic_agreement_rate", "min": 0.9, "min_count": 20}]}))
    bad, _ = run_robustness(tmp_path, ds, "position-double", "gp", "--gate-policy", policy)
    assert bad.exit_code == 1
    fails = [l for l in bad.stderr.splitlines() if l.startswith("FAIL: ")]
    assert len(fails) == 2 and "language=de, option_order.semantic_agreement_rate" in fails[0]
    good, doc = run_robustness(tmp_path, ds, "content-double", "gc", "--gate-policy", policy)
    assert good.exit_code == 0 and doc["gate"]["failures"] == [] and len(doc["gate"]["measures"]) == 2
    assert doc["gate"]["measures"][0]["n"] == 40
    policy.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"language": "en"}, "metric": "option_order.semantic_agreement_rate", "min": 0.9, "min_count": 41}]}))
    count = invoke("robustness", "--run", "gc", "-w", tmp_path / "wh", "--gate-policy", policy)
    assert count.exit_code == 1 and "candidate count 40 is below min_count 41" in count.stderr
    policy.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"language": "en"}, "metric": "baseline.accuracy", "max_drop": 0.1, "min_count": 1}]}))
    relative = invoke("robustness", "--run", "gc", "-w", tmp_path / "wh", "--gate-policy", policy)
    assert relative.exit_code == 2 and "absolute limit" in relative.stderr


# ------------------------------------------------------------------------------- across runs (diff)
@pytest.mark.slow
def test_diff_of_two_robustness_runs_shows_agreement_changes_per_kind(tmp_path):
    ds = dataset(tmp_path, n_rows=40, n_opts=4)
    wh = tmp_path / "wh"
    a, doc_a = run_robustness(tmp_path, ds, "position-double", "a")
    b, doc_b = run_robustness(tmp_path, ds, "content-double", "b")
    assert a.exit_code == 0 and b.exit_code == 0
    out = tmp_path / "diff.json"
    result = invoke("diff", "a", "b", "-w", wh, "--bootstrap", "100", "--json", out, "--markdown", tmp_path / "d.md")
    assert result.exit_code == 0, result.stderr
    block = json.loads(out.read_text())["robustness"]
    oo = block["summary"]["option_order"]
    assert oo["a"]["semantic_agreement_rate"] == doc_a["summary"]["option_order"]["semantic_agreement_rate"]
    assert oo["delta"]["semantic_agreement_rate"] == 1.0 - oo["a"]["semantic_agreement_rate"]
    assert block["summary"]["label_rename"]["delta"]["semantic_agreement_rate"] == 0.0
    assert set(block["languages"]) == {"en", "de"}
    assert "robustness (seed A=13 B=13)" in result.stdout and "option_order" in result.stdout
    assert "### robustness (B - A)" in (tmp_path / "d.md").read_text()
    assert "40 compared" in result.stdout                      # the case-level diff reads baseline rows
    plain = invoke("run", ds, "--model", "position-double", "--run-id", "plain", "-w", wh)
    assert plain.exit_code == 0
    mixed = invoke("diff", "plain", "a", "-w", wh, "--bootstrap", "100", "--json", out)
    assert mixed.exit_code == 0 and "robustness" not in json.loads(out.read_text())
    assert "robustness (" not in mixed.stdout


# ------------------------------------------------------------------------------- docs/robustness.md
DOC_TOL = 1e-12


def doc_blocks() -> Dict[str, str]:
    import re
    from helpers import ROOT

    text = (ROOT / "docs" / "robustness.md").read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"^```sql\n(.*?)^```", text, re.M | re.S):
        first = block.splitlines()[0]
        if first.startswith("-- check: "):
            found[first[len("-- check: "):].strip()] = block
    assert set(found) == {"robustness-groups", "robustness-quality"}
    return found


def check_doc_queries(root, run_id: str, doc: Dict[str, Any]) -> int:
    """Run the doc's plain-DuckDB queries in `root` (which holds warehouse/) and compare with the document."""
    import os

    blocks = doc_blocks()
    here = os.getcwd()
    os.chdir(root)
    try:
        con = duckdb.connect()
        groups = sqlfiles.rows(con.execute(blocks["robustness-groups"], {"run_id": run_id}))
        quality = sqlfiles.rows(con.execute(blocks["robustness-quality"], {"run_id": run_id}))
    finally:
        os.chdir(here)
    checked = 0
    for row in groups:
        where = doc["summary"] if row["language"] is None else doc["languages"][row["language"]]
        expected = where[row["kind"]]
        assert row["n"] == expected["n"]
        for name, value in row.items():
            if name in ("language", "kind", "n"):
                continue
            assert value == pytest.approx(expected[name], rel=DOC_TOL, abs=DOC_TOL), (row, name)
            checked += 1
    for row in quality:
        where = doc["summary"] if row["language"] is None else doc["languages"][row["language"]]
        expected = where["quality"][row["kind"]]
        assert row["n_labelled"] == expected["n_labelled"]
        assert row["accuracy"] == pytest.approx(expected["accuracy"], rel=DOC_TOL, abs=DOC_TOL)
        checked += 1
    return checked


@pytest.mark.slow
def test_the_documented_duckdb_queries_rederive_the_document(tmp_path):
    ds = dataset(tmp_path, n_rows=60, n_opts=4)
    result, doc = run_robustness(tmp_path, ds, "position-double", "doc")
    assert result.exit_code == 0
    # a second run in the same warehouse must not leak into the first's numbers
    assert run_robustness(tmp_path, ds, "content-double", "other")[0].exit_code == 0
    (tmp_path / "warehouse").symlink_to(tmp_path / "wh")
    assert check_doc_queries(tmp_path, "doc", doc) == 3 * 3 * 7 + 3 * 3


# ------------------------------------------------------------------------------- MiniLM on MASSIVE (slow)
@pytest.mark.slow
@needs_shared_data("massive", "test", "en-US.jsonl")
def test_minilm_robustness_on_200_massive_en_us_cases_rederives_from_the_store(tmp_path):
    from pathlib import Path

    from helpers import shared_data
    from laya_cases.harness.massive import sampler as massive

    ds = tmp_path / "massive-en.jsonl"
    assert massive.write("en-US", ds, n_rows=200, source=Path(shared_data("massive", "test"))) == 200
    out = tmp_path / "rob.json"
    result = invoke("robustness", ds, "--model", "minilm", "--run-id", "rob-en", "-w", tmp_path / "warehouse",
                    "--json", out)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    doc = strict_loads(out.read_text(encoding="utf-8"))
    summary = doc["summary"]
    assert summary["option_order"]["n"] == summary["label_rename"]["n"] == 200 and doc["errors"] == 0
    # cosine per option text: the order of the options cannot change the answer
    assert summary["option_order"]["semantic_agreement_rate"] == 1.0
    assert summary["option_order"]["max_probability_drift"] <= 1e-4
    assert summary["quality"]["baseline"]["n_labelled"] == 200
    base, moved = summary["quality"]["baseline"], summary["quality"]["option_order"]
    assert base.keys() == moved.keys() and base["accuracy"] == moved["accuracy"]
    # unrounded confidences (S7.7): a softmax over reordered options may differ in the last bits
    assert all(math.isclose(base[k], moved[k], rel_tol=0, abs_tol=1e-12) for k in base if base[k] is not None)
    print(json.dumps(summary, indent=1))
    # no model: the stored rows give the same document, and the documented plain-DuckDB queries agree
    again = tmp_path / "again.json"
    assert invoke("robustness", "--run", "rob-en", "-w", tmp_path / "warehouse", "--json", again).exit_code == 0
    assert strict_loads(again.read_text(encoding="utf-8")) == doc
    assert check_doc_queries(tmp_path, "rob-en", doc) > 0
    report = tmp_path / "report.json"
    assert invoke("report", "rob-en", "-w", tmp_path / "warehouse", "--json", report).exit_code == 0
    overall = json.loads(report.read_text(encoding="utf-8"))["overall"]
    assert overall["choice_accuracy"] == summary["quality"]["baseline"]["accuracy"]
    assert overall["ece"] == summary["quality"]["baseline"]["ece"]


def test_unlabelled_cases_have_pairs_but_no_accuracy(tmp_path):
    rows = [{"state": "s%d" % i, "questions": {"q": {"type": "choice", "instructions": "i",
                                                     "criteria": {"x": "ex", "y": "why", "z": "zed"}}},
             "expected": {"q": None}} for i in range(5)]
    ds = write_jsonl(tmp_path / "unlabelled.jsonl", rows)
    result, doc = run_robustness(tmp_path, ds, "position-double", "unl")
    assert result.exit_code == 0, result.stderr
    assert doc["summary"]["quality"] == {kind: {"n_labelled": 0} for kind in V.KINDS}
    assert doc["summary"]["option_order"]["n"] == 5 and set(doc["languages"]) == {""}
    rows = sqlfiles.rows(connect(Warehouse(tmp_path / "wh"), ["unl"], variants=True).execute(
        "SELECT expected_json, correct FROM cases"))
    assert len(rows) == 15 and all(r == {"expected_json": "null", "correct": None} for r in rows)


@pytest.mark.slow
def test_batching_groups_equal_presented_questions_and_changes_no_number(tmp_path):
    ds = dataset(tmp_path, n_rows=30, n_opts=3)
    _, one = run_robustness(tmp_path, ds, "content-double", "one")
    _, batched = run_robustness(tmp_path, ds, "content-double", "batched", "--batch-size", "8")
    assert batched["summary"] == one["summary"] and batched["languages"] == one["languages"]
    con = connect(Warehouse(tmp_path / "wh"), ["batched"], variants=True)
    sizes = dict(con.execute("SELECT variant, max(chunk_size) FROM cases GROUP BY ALL").fetchall())
    assert sizes["baseline"] == 8 and sizes["label_rename"] == 8      # one question for every row
    assert sizes["option_order"] < 8                                  # the order is per case: few rows share one


# ------------------------------------------------------------------------------- the metamorphic harness's flags
@pytest.mark.slow
@needs_shared_data("massive", "test", "en-US.jsonl")
def test_langs_samples_massive_in_process_as_the_dataset_route_does(tmp_path):
    """`robustness --langs en,de --per-lang N --n-opts K --seed S --data DIR --out F` (the metamorphic harness's
    command line) = `massive dataset` of each language, then `robustness DATASET`: the same rows, case ids,
    variants and answers; the run records the sampling under config.massive."""
    from pathlib import Path

    from helpers import shared_data
    from laya_cases.harness.massive import sampler as massive

    data = Path(shared_data("massive", "test"))
    ds = tmp_path / "both.jsonl"
    write_jsonl(ds, [row for locale in ("en-US", "de-DE")
                     for row in massive.rows(locale, n_rows=9, n_opts=5, seed=7, source=data)])
    file_route, file_doc = run_robustness(tmp_path, ds, "position-double", "file", "--seed", "7")
    out = tmp_path / "langs.json"
    langs = invoke("robustness", "--model", "position-double", "--langs", "en,de", "--per-lang", "9", "--n-opts", "5",
                   "--seed", "7", "--data", data, "--batch-size", "4", "--run-id", "langs", "-w", tmp_path / "wh",
                   "--out", out)
    assert file_route.exit_code == 0 and langs.exit_code == 0, (file_route.stderr, langs.stderr)
    doc = strict_loads(out.read_text(encoding="utf-8"))
    assert doc["summary"] == file_doc["summary"] and doc["languages"] == file_doc["languages"]
    assert doc["summary"]["option_order"]["n"] == 18 and set(doc["languages"]) == {"en", "de"}
    columns = ("row_index, case_id, parent_case_id, variant, language_key, item_id, options, predicted, "
               "probabilities, correct, slot_order, presented_labels")
    rows = {run: connect(Warehouse(tmp_path / "wh"), [run], variants=True).execute(
        "SELECT %s FROM cases ORDER BY variant, row_index" % columns).fetchall() for run in ("file", "langs")}
    assert len(rows["langs"]) == 54 and rows["langs"] == rows["file"]
    config = json.loads(Warehouse(tmp_path / "wh").run_row("langs")["config_json"])
    assert {k: config["massive"][k] for k in ("langs", "per_lang", "n_opts", "seed")} == {
        "langs": ["en", "de"], "per_lang": 9, "n_opts": 5, "seed": 7}


@pytest.mark.parametrize("argv,message", [
    (["ds.jsonl", "--langs", "en"], "one of them"),
    (["--run", "x", "--langs", "en"], "one of them"),
    (["ds.jsonl", "--per-lang", "5", "--n-opts", "3"], "--per-lang, --n-opts: only with --langs"),
    (["--langs", "en", "--n-opts", "1"], "--n-opts must be >= 2"),
    (["--langs", "xx"], "unknown MASSIVE language"),
])
def test_the_harness_flags_are_refused_where_they_do_not_apply(tmp_path, argv, message):
    result = invoke("robustness", *argv, "--model", "position-double", "-w", tmp_path / "wh")
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "wh").exists()
