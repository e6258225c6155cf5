"""Hugging Face `datasets`, pandas and polars in and out (laya_cases/interop/convert.py, docs/datasets.md), offline:
every source is built here, nothing is read from the Hub."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from typer.testing import CliRunner

from helpers import ROOT

datasets = pytest.importorskip("datasets")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

import laya_cases as lc                                    # noqa: E402
from laya_cases.report import build as R                         # noqa: E402
from laya_cases.interop.convert import from_hf, write_jsonl       # noqa: E402
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions             # noqa: E402
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs    # noqa: E402
from laya_cases.store.warehouse import Warehouse                 # noqa: E402
from laya_cases.query.sql import connect

INTENTS = ["refund", "cancel", "other"]
DATA: Dict[str, List[Any]] = {
    "text": ["money back please", "cancel my plan", "hello there", "WIN A PRIZE", "refund now", "stop the plan"],
    "intent": [0, 1, 2, 2, 0, 1],                       # a ClassLabel in the Dataset, names in the frames
    "topic": ["billing", "account", "other", "other", "billing", "account"],
    "spam": [False, False, False, True, False, False],
    "urgency": [1.0, 2.0, 0.0, 0.5, 2.0, 1.0],
    "lang": ["en", "en", "de", "en", "de", "en"],
    "id": [11, 12, 13, 14, 15, 16],
    "labels": [["a"], [], ["b", "c"], ["a"], [], ["c"]],
}
MAPPINGS = {                                            # one question of each kind, the same extras
    "intent": dict(label="intent", qid="intent", instructions="What does the customer want?"),
    "topic": dict(label="topic"),
    "spam": dict(label="spam", type="noul"),
    "urgency": dict(label="urgency", type="score", options=["not urgent", "soon", "blocked"]),
}
EXTRAS = dict(state="text", language="lang", item_id="id", tags="labels")


def _features():
    V = datasets.Value
    return datasets.Features({"text": V("string"), "intent": datasets.ClassLabel(names=INTENTS),
                              "topic": V("string"), "spam": V("bool"), "urgency": V("float64"), "lang": V("string"),
                              "id": V("int64"), "labels": datasets.List(V("string"))})


def _dataset():
    return datasets.Dataset.from_dict(DATA, features=_features())


def _frame_data() -> Dict[str, List[Any]]:
    return dict(DATA, intent=[INTENTS[i] for i in DATA["intent"]])


def _invoke(*args: str):
    import laya_cases_cli.commands  # noqa: F401  (registers every command)
    from laya_cases_cli.app import app

    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def offline_cache(tmp_path, monkeypatch):
    """No network, and datasets' cache inside the test's folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


class FirstOptionDouble(Runner):
    """Answers every question with its first option at 0.6 (noul: true at 0.7), whatever the state."""

    name = "first-option-double"
    capabilities = Capabilities()

    def __init__(self, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id=self.name, revision="0" * 40, settings={})

    def predict_batch(self, states, questions, **kwargs):
        def probs(body):
            k = 2 if body["type"] == "noul" else len(body["criteria"])
            return [0.3, 0.7] if body["type"] == "noul" else [0.6] + [0.4 / (k - 1)] * (k - 1)
        return [{"answers": {qid: answer_from_probs(body, probs(body)) for qid, body in questions.items()}}
                for _ in states]


# ---------------------------------------------------------------------------- in: a Dataset -> S1 rows
@pytest.mark.parametrize("name", sorted(MAPPINGS))
def test_a_dataset_becomes_a_strictly_valid_file_with_labels_of_the_right_json_type(tmp_path, name):
    out = tmp_path / ("%s.jsonl" % name)
    rows = from_hf(_dataset(), out=out, **EXTRAS, **MAPPINGS[name])
    res = _invoke("validate", str(out), "--strict")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "6 examples, 1 question id(s): %s" % name
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines == rows and len(lines) == 6
    labels = [line["expected"][name] for line in lines]
    body = lines[0]["questions"][name]
    if name == "intent":                                # ClassLabel indices become names; names are the options
        assert labels == [INTENTS[i] for i in DATA["intent"]] and body["criteria"] == INTENTS
        assert body["instructions"] == "What does the customer want?"
    elif name == "topic":                               # distinct values sorted by code point
        assert labels == DATA["topic"] and body["criteria"] == ["account", "billing", "other"]
        assert body["instructions"] == "Which topic fits the input?"
    elif name == "spam":
        assert labels == DATA["spam"] and all(type(v) is bool for v in labels) and "criteria" not in body
    else:
        assert labels == DATA["urgency"] and all(type(v) is float for v in labels)
        assert body["criteria"] == ["not urgent", "soon", "blocked"]
    assert [line["item_id"] for line in lines] == DATA["id"]
    assert [line["language"] for line in lines] == DATA["lang"]
    assert [line.get("tags", []) for line in lines] == DATA["labels"]
    assert [line["state"] for line in lines] == DATA["text"]


@pytest.mark.slow
def test_converted_rows_run_and_the_report_counts_what_the_labels_say(tmp_path):
    """The converted files run (a test double answers the first option; noul true) and the report's
    accuracy is the share of labels equal to that answer, per question."""
    wh = Warehouse(tmp_path / "wh")
    for name in ("intent", "spam", "urgency"):
        out = tmp_path / ("%s.jsonl" % name)
        from_hf(_dataset(), out=out, **EXTRAS, **MAPPINGS[name])
        execute(wh, RunOptions(str(out), run_id=name), runner=FirstOptionDouble())
    intent = R.build(connect(wh, ["intent"]), "intent", R.Options())["overall"]
    assert intent["choice_accuracy"] == sum(i == 0 for i in DATA["intent"]) / 6
    spam = R.build(connect(wh, ["spam"]), "spam", R.Options())["overall"]
    assert spam["noul_accuracy"] == sum(DATA["spam"]) / 6
    store = lc.open(wh.root)
    cases = store.cases("urgency")
    assert cases.height == 6 and sorted(cases["item_id"].to_list()) == [str(i) for i in DATA["id"]]
    assert sorted(set(cases["language_key"].to_list())) == ["de", "en"]


def test_object_state_limit_and_a_two_class_label_as_noul(tmp_path):
    ds = _dataset().cast_column("spam", datasets.ClassLabel(names=["ham", "spam"]))
    rows = from_hf(ds, state=["text", "lang"], label="spam", type="noul", limit=4)
    assert len(rows) == 4 and rows[0]["state"] == {"text": "money back please", "lang": "en"}
    assert rows[0]["questions"]["spam"]["labels"] == {"false": "ham", "true": "spam"}
    assert [r["expected"]["spam"] for r in rows] == [False, False, False, True]
    texts = from_hf(pd.DataFrame({"t": ["a", "b"], "y": ["ham", "spam"]}), state="t", label="y", type="noul",
                    options=["ham", "spam"])
    assert [r["expected"]["y"] for r in texts] == [False, True]


# ---------------------------------------------------------------------------- pandas / polars alike
def test_pandas_and_polars_frames_write_the_same_bytes_as_the_dataset(tmp_path):
    frames = {"pandas": pd.DataFrame(_frame_data()), "polars": pl.DataFrame(_frame_data()),
              "polars-lazy": pl.DataFrame(_frame_data()).lazy()}
    for name, mapping in MAPPINGS.items():
        reference = tmp_path / ("dataset-%s.jsonl" % name)
        from_hf(_dataset(), out=reference, **EXTRAS, **mapping)
        for kind, frame in frames.items():
            extra = {"options": INTENTS} if name == "intent" else {}     # a frame has no ClassLabel order
            out = tmp_path / ("%s-%s.jsonl" % (kind, name))
            from_hf(frame, out=out, **EXTRAS, **dict(mapping, **extra))
            assert out.read_bytes() == reference.read_bytes(), (kind, name)
    default = from_hf(pd.DataFrame(_frame_data()), state="text", label="intent")
    assert default[0]["questions"]["intent"]["criteria"] == sorted(INTENTS)      # no ClassLabel: sorted labels


# ---------------------------------------------------------------------------- CLI, local sources
def test_cli_reads_a_saved_dataset_dict_and_local_json_csv_parquet_files(tmp_path):
    saved = tmp_path / "saved"
    datasets.DatasetDict({"test": _dataset(), "train": _dataset().select(range(2))}).save_to_disk(str(saved))
    frame = pd.DataFrame(_frame_data()).drop(columns=["labels"])
    frame.to_json(tmp_path / "d.jsonl", orient="records", lines=True)
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    common = ["--state", "text", "--label", "intent", "--qid", "intent", "--language-column", "lang"]
    res = _invoke("dataset", "from-hf", str(saved), "--split", "test", *common, "--limit", "5",
                  "--out", str(tmp_path / "saved.jsonl"))
    assert res.exit_code == 0 and res.stdout.strip() == "5 examples written to %s" % (tmp_path / "saved.jsonl")
    outputs = []
    for name in ("d.jsonl", "d.csv", "d.parquet"):
        out = tmp_path / (name + ".out")
        res = _invoke("dataset", "from-hf", str(tmp_path / name), "--split", "test", *common, "--option", "refund",
                      "--option", "cancel", "--option", "other", "--out", str(out))
        assert res.exit_code == 0, res.output
        assert _invoke("validate", str(out), "--strict").exit_code == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0].splitlines()[:5] == (tmp_path / "saved.jsonl").read_bytes().splitlines()
    res = _invoke("dataset", "from-hf", str(saved), *common, "--out", str(tmp_path / "x.jsonl"))
    assert res.exit_code == 2 and "give --split; its splits: test, train" in res.output


@pytest.mark.parametrize("args, message", [
    (["--state", "body"], "column 'body' (state) is not in the dataset; its columns: text, intent,"),
    (["--label", "nope"], "column 'nope' (label) is not in the dataset"),
    (["--language-column", "locale"], "column 'locale' (language) is not in the dataset"),
    (["--option", "refund", "--option", "cancel"], "row 2: column 'intent' value 'other' is not one of the "
                                                   "options: refund, cancel"),
    (["--label", "topic", "--type", "noul"], "row 0: column 'topic' value 'billing' is not a noul label"),
    (["--label", "topic", "--type", "score"], "row 0: column 'topic' value 'billing' is not a score label"),
    (["--label", "urgency", "--type", "score", "--option", "low", "--option", "high"],
     "row 1: column 'urgency' value 2.0 is outside the levels 0..1"),
    (["--type", "ranking"], "question type must be choice, noul or score, got 'ranking'"),
    (["--limit", "0"], "--limit must be >= 1, got 0"),
])
def test_bad_mappings_are_one_line_exit_2_naming_the_column_and_nothing_is_written(tmp_path, args, message):
    saved = tmp_path / "saved"
    _dataset().save_to_disk(str(saved))
    out = tmp_path / "out.jsonl"
    out.write_text("keep\n")
    base = {"--state": "text", "--label": "intent"}
    for flag in ("--state", "--label"):
        if flag in args:
            base.pop(flag)
    argv = [a for kv in base.items() for a in kv] + args
    res = _invoke("dataset", "from-hf", str(saved), *argv, "--out", str(out))
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and message in res.output, res.output
    assert out.read_text() == "keep\n"


def test_null_labels_and_missing_files_are_named(tmp_path):
    frame = pd.DataFrame({"text": ["a", "b"], "y": ["x", None]})
    with pytest.raises(lc.UsageError, match=r"^row 1: column 'y' has no label \(null\)$"):
        from_hf(frame, state="text", label="y")
    with pytest.raises(lc.UsageError, match="no such file or folder"):
        from_hf(str(tmp_path / "absent.csv"), state="text", label="y")
    with pytest.raises(lc.UsageError, match="pick one split first"):
        from_hf(datasets.DatasetDict({"test": _dataset()}), state="text", label="intent")
    with pytest.raises(lc.UsageError, match="holds bytes"):
        from_hf(pd.DataFrame({"s": [b"\x00"], "y": ["x"]}), state="s", label="y")
    with pytest.raises(lc.UsageError, match="^the dataset has no rows$"):
        from_hf(_dataset().select([]), state="text", label="intent")


def test_a_streaming_dataset_and_a_folder_of_data_files(tmp_path):
    reference = from_hf(_dataset(), **EXTRAS, **MAPPINGS["intent"])
    assert from_hf(_dataset().to_iterable_dataset(), **EXTRAS, **MAPPINGS["intent"]) == reference
    assert from_hf(_dataset().to_iterable_dataset(), limit=2, **EXTRAS, **MAPPINGS["intent"]) == reference[:2]
    folder = tmp_path / "files"
    folder.mkdir()
    frame = pd.DataFrame(_frame_data())
    frame.iloc[:2].to_json(folder / "train.jsonl", orient="records", lines=True)
    frame.to_json(folder / "test.jsonl", orient="records", lines=True)
    rows = from_hf(str(folder), split="test", state="text", label="intent", options=INTENTS)
    assert [r["expected"]["intent"] for r in rows] == [r["expected"]["intent"] for r in reference]


# ---------------------------------------------------------------------------- out: a run -> datasets
def test_to_hf_round_trip_keeps_rows_case_ids_and_types(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    data = tmp_path / "intent.jsonl"
    from_hf(_dataset(), out=data, **EXTRAS, **MAPPINGS["intent"])
    execute(wh, RunOptions(str(data), run_id="0123"), runner=FirstOptionDouble())
    cases = lc.open(wh.root).cases("0123")
    out = tmp_path / "shared"
    res = _invoke("dataset", "to-hf", "0123", "--out", str(out), "-w", str(wh.root))
    assert res.exit_code == 0 and res.stdout.strip() == "6 cases of run 0123 written to %s" % out, res.output
    back = datasets.load_from_disk(str(out))
    assert len(back) == cases.height == 6
    assert back["case_id"] == cases["case_id"].to_list() and set(back["run_id"]) == {"0123"}
    assert back.features["row_index"] == datasets.Value("int64")
    assert back.features["case_id"] == datasets.Value("string")
    assert back.features["options"] == datasets.List(datasets.Value("string"))
    assert back.to_pandas()["confidence"].tolist() == cases["confidence"].to_list()
    assert lc.open(wh.root).to_hf("0123")["item_id"] == cases["item_id"].to_list()
    again = _invoke("dataset", "to-hf", "0123", "--out", str(out), "-w", str(wh.root))
    assert again.exit_code == 2 and "exists; give a new folder" in again.output
    unknown = _invoke("dataset", "to-hf", "nope", "--out", str(tmp_path / "n"), "-w", str(wh.root))
    assert unknown.exit_code == 2 and "nope" in unknown.output and "0123" in unknown.output


def test_write_jsonl_is_plain_jsonl_and_import_stays_light(tmp_path):
    path = write_jsonl([{"state": "é", "questions": {}, "expected": {}}], tmp_path / "a.jsonl")
    assert path.read_bytes() == '{"state": "é", "questions": {}, "expected": {}}\n'.encode("utf-8")
    code = ("import sys, laya_cases as lc; lc.from_hf; lc.run_to_hf; "
            "print(sorted(m for m in ('datasets', 'pandas', 'polars', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_docs_python_examples_run_as_written(tmp_path, monkeypatch):
    """docs/datasets.md: the offline Python blocks run in a fresh folder; the printed row is the real one."""
    import ast
    import re

    text = (ROOT / "docs" / "datasets.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S) if "push_to_hub" not in b]
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: Dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, "docs/datasets.md", "exec"), namespace)
    printed = re.search(r"^print\(rows\[0\]\)\n((?:# .*\n)+)", blocks[0], re.M).group(1)
    assert namespace["rows"][0] == ast.literal_eval("".join(line[2:] for line in printed.splitlines()))
    for name in ("intent.jsonl", "spam.jsonl", "stars.jsonl"):
        res = _invoke("validate", name, "--strict")
        assert res.exit_code == 0, res.output
