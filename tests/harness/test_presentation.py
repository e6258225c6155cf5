"""Presentation checks (S7.9-S7.12): fixed inputs, the two checks from stored logits (SQL), per-state
values and leave-one-out ranges against plain Python, thresholds and exit codes, runners without
logits, parity with the runner's own probabilities, and a Laya checkpoint built locally (slow)."""
from __future__ import annotations

import json
import math
import random
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

from helpers import ROOT
from laya_cases.core.errors import UsageError
from laya_cases.harness.presentation import checks, harness, inputs
from laya_cases.harness.presentation.constants import FIRST_SLOT, SLOT0
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs, softmax
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect

WORTH = {"Not urgent": 0.1, "Soon": 0.5, "Work is blocked": 1.2, "moderate": 0.3, "a request": -0.4}


class LogitRunnerDouble(Runner):
    """A scripted runner: logit of a level = WORTH[text] (order-invariant), plus `hole` on slot 0;
    probabilities = softmax(logits / T) as the answer reports them (unrounded) plus `skew`."""

    name = "logit-double"
    capabilities = Capabilities()

    def __init__(self, model: Any = None, hole: float = 0.0, skew: float = 0.0, temperature: float = 0.7,
                 logits: bool = True, nan: bool = False, **options: Any) -> None:
        self.hole, self.skew, self.t, self.with_logits, self.nan = hole, skew, temperature, logits, nan
        self.info = RunnerInfo(runner=self.name, model_id="logit-double", revision="r0")

    def _logits(self, state: Any, criteria: List[str]) -> List[float]:
        z = [WORTH[c] for c in criteria]
        z[0] += self.hole
        return z

    def predict_batch(self, states, questions, **kwargs):
        out = []
        for state in states:
            answers, facts = {}, {}
            for qid, body in questions.items():
                z = self._logits(state, body["criteria"])
                p = softmax(z, self.t)
                p[0] += self.skew
                answers[qid] = answer_from_probs(body, p)
                if self.nan:
                    answers[qid]["probabilities"]["0"] = float("nan")
                if self.with_logits:
                    facts[qid] = {"logits": z, "temperature": self.t}
            out.append({"answers": answers, "facts": facts})
        return out


class RandomLogitRunnerDouble(LogitRunnerDouble):
    """Seeded random logits on a coarse grid (ties happen), per (state, question)."""

    def __init__(self, seed: int = 0, **kw: Any) -> None:
        super().__init__(**kw)
        self.rng = random.Random(seed)
        self.seen: Dict[tuple, List[float]] = {}

    def _logits(self, state, criteria):
        z = [self.rng.choice([-1.0, -0.5, 0.0, 0.25, 0.5]) for _ in criteria]
        self.seen.setdefault(json.dumps(state), []).append(z)
        return z


def _verdict(tmp_path, runner, rid="p"):
    wh = Warehouse(tmp_path / "wh")
    harness.execute(wh, run_id=rid, runner=runner)
    return wh, checks.verdict(connect(wh, [rid]), rid)


def test_the_fixed_inputs_are_ours_and_complete():
    path, rows = inputs.load()
    doc = json.loads((ROOT / "data" / "presentation_states.json").read_text(encoding="utf-8"))
    assert "Written for laya-cases" in doc["about"] and doc["instructions"] == "How urgent is this request?"
    assert len(rows) == 10 and all(len(r.questions) == 12 for r in rows)
    qs = rows[0].questions
    assert qs["score_slot0_identical/a request/4"]["criteria"] == ["a request"] * 4
    assert qs["score_first_slot_permuted/201"]["criteria"] == ["Work is blocked", "Not urgent", "Soon"]
    assert all(b["type"] == "score" and b["instructions"] == doc["instructions"] for b in qs.values())


def test_an_order_invariant_runner_scores_exactly_one_third_and_passes(tmp_path):
    wh, v = _verdict(tmp_path, LogitRunnerDouble())
    first = v["checks"][FIRST_SLOT]
    assert first["value"] == 1 / 3 and first["metric"] == 0.3333 and first["passed"]
    assert first["per_state"] == [2 / 6] * 10 and first["n_decisions"] == 60
    slot0 = v["checks"][SLOT0]
    assert abs(slot0["value"]) < 1e-12 and slot0["passed"] and slot0["n_decisions"] == 60
    assert v["parity"]["agrees"] and v["parity"]["n_decisions"] == 120 and v["parity"]["max_abs_diff"] <= 5e-5
    assert v["exit"] == 0 and v["reasons"] == []
    json.dumps(v, allow_nan=False)
    logits = connect(wh, ["p"]).execute("SELECT logits FROM cases WHERE qid = 'score_first_slot_permuted/201' "
                                       "AND row_index = 0").fetchone()[0]
    assert logits == [1.2, 0.1, 0.5]


def test_a_slot0_hole_fails_both_gates_exit_1(tmp_path):
    _, v = _verdict(tmp_path, LogitRunnerDouble(hole=-5.0))
    assert not v["checks"][SLOT0]["passed"] and not v["checks"][FIRST_SLOT]["passed"]
    assert v["checks"][FIRST_SLOT]["value"] == 0.0
    expected = sum(-5.0 * (1 - 1 / k) for k in (3, 4, 5)) / 3
    assert v["checks"][SLOT0]["value"] == pytest.approx(expected, abs=1e-12)
    assert v["checks"][SLOT0]["metric"] == round(expected, 4)
    assert v["exit"] == 1 and v["parity"]["agrees"]


@pytest.mark.parametrize("kw", [{"skew": 0.002}, {"nan": True}])
def test_probabilities_that_disagree_with_the_logits_exit_2(tmp_path, kw):
    _, v = _verdict(tmp_path, LogitRunnerDouble(**kw))
    assert v["exit"] == 2 and not v["parity"]["agrees"] and "disagrees" in v["reasons"][0]
    if "nan" in kw:
        assert v["parity"]["n_nan"] == 120 and v["parity"]["max_abs_diff"] is None
    json.dumps(v, allow_nan=False)


def test_a_runner_without_logits_is_refused_and_nothing_is_written(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    with pytest.raises(UsageError, match="exposes no raw logits"):
        harness.execute(wh, run_id="n", runner=LogitRunnerDouble(logits=False))
    assert not wh.has_run("n")


def test_per_state_values_and_leave_one_out_against_plain_python(tmp_path):
    runner = RandomLogitRunnerDouble(seed=7)
    _, v = _verdict(tmp_path, runner)
    _, rows = inputs.load()
    slot0, first = [], []
    for row in rows:
        zs = runner.seen[json.dumps(row.state)]
        by_qid = dict(zip(row.questions, zs))
        m = [z[0] - sum(z) / len(z) for q, z in by_qid.items() if q.startswith(SLOT0)]
        slot0.append(sum(m) / len(m))
        f = [1.0 if z[0] == max(z) else 0.0 for q, z in by_qid.items() if q.startswith(FIRST_SLOT)]
        first.append(sum(f) / len(f))
    for name, values in ((SLOT0, slot0), (FIRST_SLOT, first)):
        got = v["checks"][name]
        assert got["per_state"] == pytest.approx(values, abs=1e-12)
        assert got["value"] == pytest.approx(sum(values) / len(values), abs=1e-12)
        loo = [(sum(values) - x) / (len(values) - 1) for x in values]
        assert got["leave_one_out"] == pytest.approx([min(loo), max(loo)], abs=1e-12)
        assert got["passed"] == (got["value"] >= got["threshold"])


@pytest.fixture
def double_registered():
    registry.register(LogitRunnerDouble.name, LogitRunnerDouble)
    yield
    registry.unregister(LogitRunnerDouble.name)


def test_cli_runs_then_re_derives_the_same_verdict_from_the_store(tmp_path, double_registered):
    import laya_cases_cli.commands  # noqa: F401
    from laya_cases_cli.app import app

    wh = str(tmp_path / "wh")
    first = CliRunner().invoke(app, ["presentation", "--model", "logit-double", "--run-id", "cli", "-w", wh,
                                     "--json", str(tmp_path / "a.json")])
    assert first.exit_code == 0, first.output
    assert "score_first_slot_permuted  +0.3333" in first.stdout and "PASS" in first.stdout
    again = CliRunner().invoke(app, ["presentation", "--run", "cli", "-w", wh, "--json", str(tmp_path / "b.json")])
    assert again.exit_code == 0 and again.stdout == first.stdout
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    minilm = CliRunner().invoke(app, ["presentation", "--run", "nope", "-w", wh])
    assert minilm.exit_code == 2


@pytest.mark.slow
def test_laya_checkpoint_built_locally_runs_the_checks(tmp_path):
    """The real laya Agent (random head, fixed seed) through the laya-agent runner: raw logits are
    stored, the harness path agrees with the Agent's probabilities, and the verdict re-derives."""
    pytest.importorskip("laya")
    from laya_checkpoint import build

    ckpt = build(tmp_path / "ckpt")
    wh = Warehouse(tmp_path / "wh")
    harness.execute(wh, model=str(ckpt), run_id="laya")
    v = checks.verdict(connect(wh, ["laya"]), "laya")
    assert v["parity"]["agrees"] and v["parity"]["n_decisions"] == 120, v["parity"]
    assert v["exit"] in (0, 1) and all(math.isfinite(c["value"]) for c in v["checks"].values())
    assert v["checks"][FIRST_SLOT]["n_decisions"] == 60 and len(v["checks"][SLOT0]["per_state"]) == 10


def test_the_docs_duckdb_query_gives_the_verdicts_metrics(tmp_path):
    import duckdb

    runner = RandomLogitRunnerDouble(seed=3)
    wh, v = _verdict(tmp_path, runner, rid="pres-ckpt")
    text = (ROOT / "docs" / "presentation.md").read_text(encoding="utf-8")
    query = text.split("```sql\n", 1)[1].split("```", 1)[0].replace("warehouse/", str(wh.root) + "/")
    got = dict(duckdb.connect().execute(query).fetchall())
    assert got[SLOT0] == pytest.approx(v["checks"][SLOT0]["value"], abs=1e-12)
    assert got[FIRST_SLOT] == pytest.approx(v["checks"][FIRST_SLOT]["value"], abs=1e-12)
