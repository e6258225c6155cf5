"""`-` is stdout for every FILE option (click's convention). The file's bytes go to stdout, and the text for
people is not printed there, so a pipe sees the file alone. No file named `-` is written, and two `-` outputs
are refused. The table below covers every FILE output option of every command. A new one fails
`test_the_table_covers_every_file_option` until it has a row. Every input is in-repo or made here: test
doubles and tiny datasets."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest
import typer
from typer.testing import CliRunner

import laya_cases_cli.commands  # noqa: F401  (registers every command)
from doubles import LogitsDouble
from helpers import ROOT, flipped_support_answers
from resume_double import ResumeDouble, write_dataset
from laya_cases.runners import registry
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs
from laya_cases_cli.app import OUTPUT_FLAGS, app

DASH = "-"


class RelevanceDouble(Runner):
    """A yes/no scorer: the sentence is the yes probability."""

    name = "dash-relevance"
    capabilities = Capabilities(question_types=("noul",))

    def __init__(self, **kwargs: Any):
        self.info = RunnerInfo(runner=self.name, model_id="dash-relevance")

    def predict_batch(self, states, questions, **kwargs):
        return [{"answers": {q: answer_from_probs(b, [1 - float(s["sentence"]), float(s["sentence"])])
                             for q, b in questions.items()},
                 "facts": {q: {"relevance_score": float(s["sentence"])} for q in questions}} for s in states]


def _invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def _inputs(root: Path) -> Dict[str, Path]:
    """The files the commands read: a choice dataset, a robustness dataset, MASSIVE, BANKING77, relevance, a CSV."""
    paths = {"ds": write_dataset(root / "ds.jsonl", 12, special=False)}
    criteria = {"refund": "money back", "cancel": "stop the order", "other": "anything else"}
    with open(root / "rob.jsonl", "w", encoding="utf-8") as handle:
        for i in range(6):
            handle.write(json.dumps({"state": "row %d" % i, "language": ["en", "de"][i % 2],
                                     "questions": {"intent": {"type": "choice", "instructions": "Intent?",
                                                              "criteria": criteria}},
                                     "expected": {"intent": list(criteria)[i % 3]}}) + "\n")
    paths["rob"] = root / "rob.jsonl"
    labels = ["alarm_set", "audio_volume_mute", "iot_hue_lightoff", "play_music", "weather_query"]
    (root / "massive").mkdir()
    for locale in ("en-US", "de-DE"):
        with open(root / "massive" / ("%s.jsonl" % locale), "w", encoding="utf-8") as handle:
            for i in range(6):
                handle.write(json.dumps({"id": str(i), "locale": locale, "text": "%s words %d" % (locale, i),
                                         "label": labels[i % 5]}) + "\n")
    paths["massive"] = root / "massive"
    (root / "b77").mkdir()
    (root / "b77" / "categories.json").write_text(json.dumps(labels[:3]))
    with open(root / "b77" / "test.jsonl", "w", encoding="utf-8") as handle:
        for i in range(6):
            handle.write(json.dumps({"id": i, "language": "en", "text": "text %d" % i, "label": i % 3}) + "\n")
    paths["b77"] = root / "b77"
    (root / "rel").mkdir()
    with open(root / "rel" / "en.jsonl", "w", encoding="utf-8") as handle:
        for i, (label, score) in enumerate([("yes", "0.9"), ("no", "0.2"), ("yes", "0.6"), ("no", "0.4")]):
            handle.write(json.dumps({"id": "en-%d" % i, "language": "en", "question_id": "q%d" % i,
                                     "question": "question %d?" % i, "sentence": score, "label": int(label == "yes"),
                                     "label_text": label, "pair": "p"}) + "\n")
    paths["rel"] = root / "rel"
    (root / "reviews.csv").write_text("review,stars\ngood,5\nbad,1\nfine,3\n")
    paths["csv"] = root / "reviews.csv"
    return paths


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A store with two ingested runs (a, b), one massive run (m) and one relevance run, and the inputs."""
    root = tmp_path_factory.mktemp("dash")
    for cls in (ResumeDouble, LogitsDouble, RelevanceDouble):
        registry.register(cls.name, cls)
    paths = _inputs(root)
    wh = root / "wh"
    for run, answers in (("a", ROOT / "data" / "support.answers.jsonl"),
                         ("b", flipped_support_answers(root / "b.answers.jsonl"))):
        assert _invoke("ingest", answers, "--dataset", ROOT / "data" / "support.jsonl", "-w", wh,
                       "--run-id", run).exit_code == 0
    made = _invoke("massive", "run", "--model", "resume-double", "--langs", "en,de", "--per-lang", "6", "--n-opts",
                   "4", "--data", paths["massive"], "-w", wh, "--run-id", "m")
    assert made.exit_code == 0, made.output
    made = _invoke("relevance", "run", "--data", paths["rel"], "--model", "m", "--runner", "dash-relevance",
                   "-w", wh, "--run-id", "rel")
    assert made.exit_code == 0, made.output
    yield root, wh, paths
    for cls in (ResumeDouble, LogitsDouble, RelevanceDouble):
        registry.unregister(cls.name)


#: (command, flag) -> (argv with DASH where the file goes, whether the bytes equal the file's: a command that
#: commits a run names it with a new id each time, so only its shape is compared)
def _cases(wh: Path, p: Dict[str, Path]) -> Dict[tuple, tuple]:
    w = ["-w", wh]
    gate = ["--min-accuracy", "0.1"]
    run = ["run", p["ds"], "--model", "resume-double", "--batch-size", "3"] + w
    return {
        ("report", "--json"): (["report", "a", "--json", DASH] + w, True),
        ("report", "--markdown"): (["report", "a", "--markdown", DASH] + w, True),
        ("report", "--html"): (["report", "a", "--html", DASH] + w, True),
        ("report", "--junit"): (["report", "a", "--junit", DASH] + gate + w, False),
        ("report", "--summary"): (["report", "a", "--summary", DASH] + gate + w, True),
        ("ingest", "--junit"): (["ingest", ROOT / "data" / "support.answers.jsonl", "--junit", DASH] + gate + w, False),
        ("ingest", "--summary"): (["ingest", ROOT / "data" / "support.answers.jsonl", "--summary", DASH] + gate + w,
                                  False),
        ("compare", "--junit"): (["compare", "a", "--baseline", "b", "--junit", DASH] + w, False),
        ("compare", "--summary"): (["compare", "a", "--baseline", "b", "--summary", DASH] + w, True),
        ("diff", "--json"): (["diff", "a", "b", "--json", DASH, "--bootstrap", "100"] + w, True),
        ("diff", "--markdown"): (["diff", "a", "b", "--markdown", DASH, "--bootstrap", "100"] + w, True),
        ("diff", "--html"): (["diff", "a", "b", "--html", DASH, "--bootstrap", "100"] + w, True),
        ("rank", "--json"): (["rank", "a", "b", "--json", DASH, "--bootstrap", "100"] + w, True),
        ("rank", "--markdown"): (["rank", "a", "b", "--markdown", DASH, "--bootstrap", "100"] + w, True),
        ("rank", "--html"): (["rank", "a", "b", "--html", DASH, "--bootstrap", "100"] + w, True),
        ("calibrate", "--json"): (["calibrate", "--fit", "a", "--apply", "m", "--json", DASH] + w, True),
        ("calibrate", "--html"): (["calibrate", "--fit", "a", "--apply", "m", "--html", DASH] + w, True),
        ("stability", "--json"): (["stability", "a", "b", "--json", DASH] + w, True),
        ("stability", "--html"): (["stability", "a", "b", "--html", DASH] + w, True),
        ("audit", "--csv"): (["audit", "--runs", "a,b", "--min-agree", "1", "--csv", DASH] + w, True),
        ("audit", "--json"): (["audit", "--runs", "a,b", "--min-agree", "1", "--json", DASH] + w, True),
        ("audit", "--html"): (["audit", "--runs", "a,b", "--min-agree", "1", "--html", DASH] + w, True),
        ("sql", "--out"): (["sql", "SELECT run_id, count(*) AS n FROM cases GROUP BY 1 ORDER BY 1", "--format", "csv",
                            "--out", DASH] + w, True),
        ("export", "--out"): (["export", "m", "--format", "harness", "--out", DASH] + w, True),
        ("run", "--json"): (run + ["--json", DASH], False),
        ("run", "--markdown"): (run + ["--markdown", DASH], False),
        ("run", "--html"): (run + ["--html", DASH], False),
        ("run", "--junit"): (run + ["--junit", DASH] + gate, False),
        ("run", "--summary"): (run + ["--summary", DASH] + gate, False),
        ("shortlist", "--json"): (["shortlist", p["ds"], "--model", "resume-double", "--tournament", "--json", DASH]
                                  + w, False),
        ("shortlist", "--markdown"): (["shortlist", p["ds"], "--model", "resume-double", "--tournament",
                                       "--markdown", DASH] + w, False),
        ("shortlist", "--html"): (["shortlist", p["ds"], "--model", "resume-double", "--tournament", "--html", DASH]
                                  + w, False),
        ("banking77", "--out"): (["banking77", "--source", p["b77"], "--out", DASH], True),
        ("presentation", "--json"): (["presentation", "--model", "logits-double", "--json", DASH] + w, False),
        ("robustness", "--json"): (["robustness", p["rob"], "--model", "resume-double", "--json", DASH] + w, False),
        ("robustness", "--markdown"): (["robustness", p["rob"], "--model", "resume-double", "--markdown", DASH] + w,
                                       False),
        ("crosslingual", "--json"): (["crosslingual", "m", "--json", DASH] + w, True),
        ("crosslingual", "--markdown"): (["crosslingual", "m", "--markdown", DASH] + w, True),
        ("relevance leaderboard", "--markdown"): (["relevance", "leaderboard", "--markdown", DASH] + w, True),
        ("massive dataset", "--out"): (["massive", "dataset", "en", "--rows", "4", "--data", p["massive"], "--out",
                                        DASH], True),
        ("massive run", "--json"): (["massive", "run", "--model", "resume-double", "--langs", "en", "--per-lang", "4",
                                     "--n-opts", "3", "--data", p["massive"], "--json", DASH] + w, False),
        ("massive run", "--markdown"): (["massive", "run", "--model", "resume-double", "--langs", "en", "--per-lang",
                                         "4", "--n-opts", "3", "--data", p["massive"], "--markdown", DASH] + w, False),
        ("massive report", "--json"): (["massive", "report", "m", "--json", DASH] + w, True),
        ("massive report", "--markdown"): (["massive", "report", "m", "--markdown", DASH] + w, True),
        ("dataset from-hf", "--out"): (["dataset", "from-hf", p["csv"], "--state", "review", "--label", "stars",
                                        "--type", "score", "--out", DASH], True),
    }


def _file_options() -> List[tuple]:
    """(command path, flag) of every FILE output option in the app."""
    found = []

    def walk(command, path):
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            walk(sub, path + [name])
        for param in getattr(command, "params", ()):
            flags = OUTPUT_FLAGS.intersection(getattr(param, "opts", ()))
            if flags and getattr(param, "metavar", None) == "FILE":
                found.append((" ".join(path), sorted(flags)[0]))

    walk(typer.main.get_command(app), [])
    return sorted(found)


def test_the_table_covers_every_file_option(tmp_path):
    assert sorted(_cases(tmp_path, {k: tmp_path for k in ("ds", "rob", "massive", "b77", "rel", "csv")})) == \
        _file_options()


@pytest.mark.parametrize("key", _file_options(), ids=lambda k: "%s %s" % k)
@pytest.mark.slow
def test_dash_writes_the_file_to_stdout_alone(work, monkeypatch, key):
    root, wh, paths = work
    argv, same_bytes = _cases(wh, paths)[key]
    here = root / ("cwd-%s-%s" % (key[0].replace(" ", "_"), key[1].strip("-")))
    here.mkdir()
    monkeypatch.chdir(here)
    piped = _invoke(*argv)
    assert piped.exit_code in (0, 1), piped.output       # a gate may fail: its file is still written
    assert piped.stdout and not os.path.lexists(here / DASH)
    target = here / "file.out"
    written = _invoke(*[target if a == DASH else a for a in argv])
    assert written.exit_code == piped.exit_code, written.output
    if same_bytes:                                                # the file's bytes and nothing else (a
        assert piped.stdout_bytes in (target.read_bytes(), target.read_bytes() + b"\n")   # report JSON ends a line)
    else:                                                         # another run id: the same kind of file
        head = target.read_bytes()[:1]
        assert piped.stdout_bytes[:1] == head and len(piped.stdout_bytes) > 0


def test_two_dashes_and_a_dash_folder_are_refused(work):
    _root, wh, _paths = work
    result = _invoke("report", "a", "--json", DASH, "--markdown", DASH, "-w", wh)
    assert result.exit_code == 2 and "--json and --markdown both say `-`" in result.output
    result = _invoke("plot", "a", "--out", DASH, "-w", wh)
    assert result.exit_code == 2 and "not a folder" in result.output
