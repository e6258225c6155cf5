"""The robustness `--json` document carries its config and every presentation's record (issue 29 item 4), and
every number in it is re-derived here from its `cases` alone, in plain Python (fsum means, S3.10's ECE):
the S7.15 pair of each variant from its own and its baseline's probabilities, the S7.16 groups overall and per
language, `quality` per kind, n_cases / n_errors / errors. The variants themselves are re-drawn from the seed
with CPython's random (S7.13). A scripted runner gives tied weights (first-argmax rule), disagreements, an
S7.14 error record and a failed language; a second run with other chunking gives the same cases."""
from __future__ import annotations

import json
import math
import random
import string
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from helpers import write_jsonl
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo
from laya_cases_cli.app import app

pytestmark = pytest.mark.slow          # two robustness runs through the command (~2 s)

KINDS = ("baseline", "option_order", "label_rename")


class TiedRunnerDouble(Runner):
    """Weights from a hash of (state, presented key, slot) in 1..3: many ties, so the first-argmax rule
    matters and variants disagree. A state with BOOM raises (its language fails); NAN answers a NaN."""

    name = "tied-double"
    capabilities = Capabilities()

    def __init__(self, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="tied-double", revision="1" * 40)

    def predict_batch(self, states, questions, **kwargs):
        (qid, body), = questions.items()
        keys = list(body["criteria"])
        out = []
        for state in states:
            text = json.dumps(state)
            if "BOOM" in text:
                raise RuntimeError("runner exploded")
            w = [1.0 + sum(map(ord, "%s|%s|%d" % (text, k, j))) % 3 for j, k in enumerate(keys)]
            probs = [x / sum(w) for x in w]
            best = max(range(len(keys)), key=lambda i: (probs[i], -i))
            if "NAN" in text:
                probs[0] = math.nan
            out.append({"answers": {qid: {"type": "choice", "choice": keys[best],
                                          "probabilities": dict(zip(keys, probs)), "answer_confidence": probs[best]}}})
        return out


@pytest.fixture(autouse=True)
def double():
    registry.register("tied-double", TiedRunnerDouble)
    yield
    registry.unregister("tied-double")


def _dataset(tmp_path) -> Any:
    """40 rows: en and de alternating, then 6 without a language; 3 to 6 options; some unlabelled; row 8
    answers a NaN (an S7.14 error record), row 13 raises (de fails from there on)."""
    rng, rows = random.Random(29), []
    for i in range(46):
        keys = ["k%d_%d" % (i % 5, j) for j in range(3 + i % 4)]
        state = "BOOM" if i == 13 else "NAN %d" % i if i == 8 else "state %d %d" % (i, rng.randrange(10 ** 6))
        row = {"state": {"text": state},
               "questions": {"q": {"type": "choice", "instructions": "Which?", "criteria": {k: "about " + k for k in keys}}},
               "expected": {"q": None if i % 7 == 3 else rng.choice(keys)}}
        if i < 40:
            row["language"] = ("en", "de")[i % 2]
        rows.append(row)
    return write_jsonl(tmp_path / "ds.jsonl", rows)


def _run(tmp_path, ds, run_id: str, *extra: str) -> Dict[str, Any]:
    out = tmp_path / ("%s.json" % run_id)
    res = CliRunner().invoke(app, [str(a) for a in ("robustness", ds, "--model", "tied-double", "--run-id", run_id,
                                                      "-w", tmp_path / "wh", "--json", out, *extra)])
    assert res.exit_code == 1 and "language de failed" in res.stderr, (res.exit_code, res.stderr)
    return json.loads(out.read_text(encoding="utf-8"))


# ----------------------------------------------------------------- plain-Python re-derivation from the cases
def _argmax(p: List[float]) -> int:
    return p.index(max(p))


def _pair(p: List[float], q: List[float]) -> Dict[str, Any]:
    drift = [abs(a - b) for a, b in zip(p, q)]
    terms = []
    for a, b in zip(p, q):
        m = (a + b) / 2.0
        terms += [0.5 * a * math.log(a / m) if a > 0 else 0.0, 0.5 * b * math.log(b / m) if b > 0 else 0.0]
    return {"pred_index": _argmax(p), "confidence": max(p), "semantic_agreement": _argmax(p) == _argmax(q),
            "mean_probability_drift": math.fsum(drift) / len(p), "max_probability_drift": max(drift),
            "js_divergence": max(0.0, math.fsum(terms)), "confidence_drift": max(q) - max(p)}


def _group(pairs: List[Dict[str, Any]]) -> Dict[str, Any]:
    if not pairs:
        return {"n": 0}
    n = len(pairs)
    drifts = [x["confidence_drift"] for x in pairs]
    return {"n": n, "semantic_agreement_rate": sum(x["semantic_agreement"] for x in pairs) / n,
            "mean_probability_drift": math.fsum(x["mean_probability_drift"] for x in pairs) / n,
            "max_probability_drift": max(x["max_probability_drift"] for x in pairs),
            "mean_js_divergence": math.fsum(x["js_divergence"] for x in pairs) / n,
            "mean_confidence_drift": math.fsum(drifts) / n,
            "mean_absolute_confidence_drift": math.fsum(abs(d) for d in drifts) / n,
            "worst_confidence_increase_on_disagreement":
                max([0.0] + [x["confidence_drift"] for x in pairs if not x["semantic_agreement"]])}


def _ece(conf: List[float], correct: List[bool]) -> float:
    """S3.10: 15 bins, bin = how many of the interior edges i/15 (i = 1..14) the confidence exceeds."""
    edges = [i / 15 for i in range(1, 15)]
    bins: Dict[int, List[tuple]] = {}
    for c, y in zip(conf, correct):
        bins.setdefault(sum(c > e for e in edges), []).append((c, y))
    return sum(len(b) / len(conf) * abs(sum(c for c, _ in b) / len(b) - sum(y for _, y in b) / len(b))
               for b in bins.values())


def _quality(records: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = {}
    for kind in KINDS:
        mine = [r for r in records if r["kind"] == kind and r["correct"] is not None]
        entry: Dict[str, Any] = {"n_labelled": len(mine)}
        if mine:
            entry["accuracy"] = sum(r["correct"] for r in mine) / len(mine)
            entry["ece"] = _ece([r["confidence"] for r in mine], [r["correct"] for r in mine])
        out[kind] = entry
    return out


def _block(records: List[Dict[str, Any]]) -> Dict[str, Any]:
    pairs = [dict(r["baseline"], kind=r["kind"]) for r in records if r["baseline"] is not None]
    block = {kind: _group([x for x in pairs if x["kind"] == kind]) for kind in KINDS[1:]}
    block["overall"] = _group(pairs)
    block["quality"] = _quality([r for r in records if r["error"] is None])
    return block


def _approx(derived: Dict[str, Any], doc: Dict[str, Any]) -> None:
    """Equal, ECE within 1e-12 (summed here in bin order, by the SQL exactly)."""
    assert doc["quality"].keys() == derived["quality"].keys()
    for kind, q in derived["quality"].items():
        assert doc["quality"][kind] == pytest.approx(q, rel=1e-12, abs=1e-15)
        assert {k: v for k, v in doc["quality"][kind].items() if k != "ece"} == {k: v for k, v in q.items() if k != "ece"}
    assert {k: v for k, v in doc.items() if k in KINDS + ("overall",)} == \
        {k: v for k, v in derived.items() if k != "quality"}


def rederive(doc: Dict[str, Any]) -> int:
    """Check every number of `doc` against its cases; returns how many records carried a pair."""
    cases = doc["cases"]
    by_id = {c["case_id"]: c for c in cases}
    failed = set(doc["failed_languages"])
    streams: Dict[str, random.Random] = {}
    draws: Dict[str, int] = {}
    paired = 0
    for c in cases:
        if c["kind"] == "baseline":                     # S7.13: one draw per case, per language, in row order
            draws[c["case_id"]] = streams.setdefault(c["lang"], random.Random(doc["seed"])).getrandbits(64)
        if c["error"] is not None:
            continue
        p, options = c["probabilities"], c["options"]
        assert c["pred_index"] == _argmax(p) and c["pred_label"] == options[c["pred_index"]]
        assert c["confidence"] == max(p) and math.fsum(p) == pytest.approx(1.0, abs=1e-6)
        assert c["gold_index"] == (None if c["gold_label"] is None else options.index(c["gold_label"]))
        assert c["correct"] == (None if c["gold_label"] is None else c["pred_index"] == c["gold_index"])
        base = by_id.get(c["case_id"].rsplit("/", 1)[0]) if c["kind"] != "baseline" else None
        s = draws.get(c["case_id"].split("/", 1)[0])
        n = len(options)
        order = list(range(n))
        if c["kind"] == "option_order":
            random.Random(s).shuffle(order)
            order = order[1:] + order[:1] if order == list(range(n)) else order
        presented = list(string.ascii_uppercase[:n]) if c["kind"] == "label_rename" else options
        assert c["slot_order"] == order and c["presented_keys"] == [presented[i] for i in order]
        assert c["label_map"] == dict(zip(options, presented))
        assert c["inverse_label_map"] == {presented[i]: options[i] for i in order}
        assert list(c["inverse_label_map"]) == c["presented_keys"]
        if c["kind"] == "baseline":
            assert c["baseline"] is None
            continue
        if base is None or base["error"] is not None or c["lang"] in failed:
            assert c["baseline"] is None
            continue
        assert c["baseline"] == dict(_pair(base["probabilities"], p), case_id=base["case_id"])
        paired += 1
    good = [c for c in cases if c["lang"] not in failed]
    _approx(_block(good), doc["summary"])
    langs = sorted({c["lang"] for c in cases})
    assert sorted(doc["languages"]) == langs
    for lang in langs:
        mine = [c for c in cases if c["lang"] == lang]
        if lang in failed:
            assert set(doc["languages"][lang]) == {"error"}
            continue
        entry = doc["languages"][lang]
        _approx(_block(mine), entry)
        assert entry["n_cases"] == sum(c["error"] is None for c in mine)
        assert entry["n_errors"] == sum(c["error"] is not None for c in mine)
    assert doc["errors"] == sum(c["error"] is not None for c in good)
    assert doc["config"]["robustness"]["seed"] == doc["seed"] and doc["config"]["model"] == "tied-double"
    return paired


def test_the_document_is_rederived_from_its_cases_alone(tmp_path):
    ds = _dataset(tmp_path)
    doc = _run(tmp_path, ds, "rob")
    assert doc["failed_languages"] == ["de"] and doc["errors"] == 3          # row 8: each presentation is NaN
    kinds = [c["kind"] for c in doc["cases"] if c["lang"] == ""]
    assert kinds == list(KINDS) * 6                                          # row order, then kind order
    assert rederive(doc) > 40
    agree = [c["baseline"]["semantic_agreement"] for c in doc["cases"] if c["baseline"]]
    assert 0 < sum(agree) < len(agree)                                       # the ties make variants disagree
    assert doc["summary"]["quality"]["baseline"]["n_labelled"] < doc["languages"]["en"]["n_cases"]

    # broken one way, the re-derivation notices (the check can fail)
    import copy
    for change in (lambda d: d["cases"][1]["baseline"].update(js_divergence=0.5),
                   lambda d: d["cases"][0].update(confidence=0.0),
                   lambda d: d["summary"]["overall"].update(n=1)):
        broken = copy.deepcopy(doc)
        change(broken)
        with pytest.raises(AssertionError):
            rederive(broken)

    # byte-reproducible: the store alone gives the same bytes; other chunking, the same cases
    again = CliRunner().invoke(app, ["robustness", "--run", "rob", "-w", str(tmp_path / "wh"),
                                     "--json", str(tmp_path / "again.json")])
    assert again.exit_code == 1
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "rob.json").read_bytes()
    batched = _run(tmp_path, ds, "rob-batched", "--batch-size", "8")
    assert batched["cases"] == doc["cases"] and batched["summary"] == doc["summary"]


def test_the_docs_snippet_rederives_a_document(tmp_path):
    """docs/robustness.md's Python block, run as written on a document of this file's runner."""
    import re

    from helpers import ROOT

    doc_path = tmp_path / "rob.json"
    _run(tmp_path, _dataset(tmp_path), "rob")
    text = (ROOT / "docs" / "robustness.md").read_text(encoding="utf-8")
    snippet, = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    scope: Dict[str, Any] = {}
    exec(snippet.replace('"rob-en.json"', repr(str(doc_path))), scope)          # noqa: S102  (the page's own code)
    assert scope["n"] > 0 and scope["labelled"]
