"""The reference-shaped `config` gains and loses no key (S0.2): a battery of `run` invocations through
`laya-evals run` (a stand-in Router replaying recorded answers) and through our `run` (a runner double
replaying the same answers), and the two `config` blocks must have the same keys, the same `thresholds`
block (always present, empty without a gate) and the same `timing` keys. `laya_version` is the
reference's key where Laya answered: the double that stands in for Laya records it, a plain one not.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import ROOT, write_jsonl
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo
from laya_cases_cli.app import app

laya = pytest.importorskip("laya")
from laya import evals_cli  # noqa: E402
from laya.confidence import apply_confidence_gate  # noqa: E402

pytestmark = pytest.mark.slow      # 25 runs through each CLI (about 10 s of CPU)

ANSWERS = ROOT / "data" / "support.answers.jsonl"
BOOM = "BOOM: this state makes both runners raise"


def _recorded() -> Dict[str, Any]:
    rows = [json.loads(l) for l in ANSWERS.read_text().splitlines() if l.strip() and not l.startswith("#")]
    return {json.dumps(r["state"]): r["answers"] for r in rows}


def _answer(state: Any) -> Dict[str, Any]:
    if state == BOOM:
        raise RuntimeError("runner exploded")
    return {"answers": json.loads(json.dumps(RECORDED[json.dumps(state)]))}


RECORDED = _recorded()


class StandInRouter:
    """What `laya-evals run` loads instead of a checkpoint."""

    def __init__(self, device=None, preload=False, **pins):
        self.loaded_revisions: Dict[str, Any] = {}

    def resolve(self, name):
        return name

    def predict(self, state, questions, model=None, min_confidence=None):
        result = _answer(state)
        apply_confidence_gate([result], min_confidence)
        return result

    def predict_batch(self, requests, batch_size=None, sort_by_length=False, min_confidence=None):
        return [self.predict(r["state"], r["questions"], min_confidence=min_confidence) for r in requests]


class ReplayDouble(Runner):
    """Our runner over the same answers; it does not name a Laya version."""

    name = "replay-plain"
    capabilities = Capabilities(sort_by_length=True, per_row_model=True)
    settings: Dict[str, Any] = {}

    def __init__(self, model: Any = None, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id=self.name, settings=dict(self.settings))

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        return [_answer(s) for s in states]


class LayaReplayDouble(ReplayDouble):
    """Stands in for the Laya runner, which records the version of Laya that answered."""

    name = "replay-laya"
    settings = {"laya_version": laya.__version__}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Dict[str, Path]:
    base = tmp_path_factory.mktemp("config")
    rows = [json.loads(l) for l in (ROOT / "data" / "support.jsonl").read_text().splitlines()
            if l.strip() and not l.startswith("#")]
    boom = dict(rows[0], state=BOOM)
    policy = base / "policy.json"
    policy.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.5},
        {"slice": {"qid": "intent"}, "metric": "ece", "min_count": 1, "max": 1.0}]}))
    absolute = base / "absolute.json"
    absolute.write_text(json.dumps({"version": 1, "rules": [
        {"slice": {"qid": "intent"}, "metric": "ece", "min_count": 1, "max": 1.0}]}))
    out = {"base": base, "ds": write_jsonl(base / "ds.jsonl", rows),
           "boom": write_jsonl(base / "boom.jsonl", rows[:3] + [boom] + rows[3:]), "policy": policy,
           "absolute": absolute}
    for cls in (ReplayDouble, LayaReplayDouble):
        registry.register(cls.name, cls)
    code, _, err = reference("run", out["ds"], "--json", base / "baseline.json")
    assert code == 0, err
    out["baseline"] = base / "baseline.json"
    yield out
    for cls in (ReplayDouble, LayaReplayDouble):
        registry.unregister(cls.name)


def reference(*args: Any):
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.setattr(laya, "Router", StandInRouter)
        code = evals_cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


#: (name, dataset key, flags given to both CLIs); {x} names a file of the fixture. Runs alternate between
#: the two doubles, so each flag set meets both at least across its neighbours.
BATTERY = [
    ("plain", "ds", []),
    ("model", "ds", ["--model", "{runner}"]),
    ("device", "ds", ["--device", "cpu"]),
    ("min_accuracy", "ds", ["--min-accuracy", "0.5"]),
    ("min_accuracy_fails", "ds", ["--min-accuracy", "0.99"]),
    ("max_ece", "ds", ["--max-ece", "0.5"]),
    ("min_max", "ds", ["--min", "choice_accuracy=0.5", "--max", "ece=0.9", "--min", "noul_accuracy=0.1"]),
    ("missing_metric", "ds", ["--min", "nope=0.5"]),
    ("baseline", "ds", ["--baseline", "{baseline}"]),
    ("baseline_tolerance", "ds", ["--baseline", "{baseline}", "--tolerance", "ece=0.01"]),
    ("absolute_policy", "ds", ["--gate-policy", "{absolute}"]),
    ("relative_policy", "ds", ["--gate-policy", "{policy}", "--baseline", "{baseline}"]),
    ("score_within", "ds", ["--score-within", "0.5"]),
    ("score_within_two", "ds", ["--score-within", "0.5", "--score-within", "1"]),
    ("batch", "ds", ["--batch-size", "4"]),
    ("batch_sorted", "ds", ["--batch-size", "4", "--sort-by-length"]),
    ("min_confidence", "ds", ["--min-confidence", "0.5"]),
    ("batch_min_confidence", "ds", ["--batch-size", "3", "--min-confidence", "0.7"]),
    ("skip_errors", "boom", ["--on-error", "skip"]),
    ("skip_errors_batch", "boom", ["--on-error", "skip", "--batch-size", "4"]),
    ("slices", "ds", ["--slice", "model", "--slice", "language"]),
    ("markdown", "ds", ["--markdown", "{base}/out.md"]),
    ("everything", "ds", ["--model", "{runner}", "--batch-size", "2", "--min-confidence", "0.3",
                          "--score-within", "0.25", "--min-accuracy", "0.1", "--max-ece", "0.9",
                          "--baseline", "{baseline}", "--tolerance", "aurc=0.5", "--gate-policy", "{policy}"]),
    ("plain_again", "ds", []),
    ("model_again", "ds", ["--model", "{runner}", "--max-ece", "0.01"]),
]


def test_config_keys_equal_the_references_over_the_battery(files):
    seen = []
    for i, (name, ds, flags) in enumerate(BATTERY):
        runner = ("replay-laya", "replay-plain")[i % 2]
        args = [f.format(runner=runner, **{k: str(v) for k, v in files.items()}) for f in flags]
        mine, theirs = files["base"] / ("%s.ours.json" % name), files["base"] / ("%s.ref.json" % name)
        code, _, err = reference("run", files[ds], *args, "--json", theirs)
        picked = [] if "--model" in args else ["--runner", runner]
        result = CliRunner().invoke(app, ["run", str(files[ds]), *picked, *args, "-w", str(files["base"] / "wh"),
                                          "--json", str(mine)])
        assert result.exit_code == code, (name, result.stderr, err)
        ours, ref = json.loads(mine.read_text())["config"], json.loads(theirs.read_text())["config"]
        expected = set(ref) - (set() if runner == "replay-laya" else {"laya_version"})
        assert set(ours) == expected, (name, sorted(set(ours) ^ expected))
        assert ours["thresholds"] == ref["thresholds"], name
        assert set(ours["timing"]) == set(ref["timing"]), name
        assert ours.get("laya_version") == (ref["laya_version"] if runner == "replay-laya" else None)
        seen.append((name, code, sorted(ours)))
    assert len(seen) == 25 and {code for _, code, _ in seen} == {0, 1}
    assert {"errored", "gate_policy", "score_within"} <= {k for _, _, keys in seen for k in keys}
