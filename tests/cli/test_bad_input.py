"""Issue 15 acceptance: generated malformed inputs, every one refused the same way.

Each case mutates a valid input (a dataset, an answers file, a gate policy, a baseline, a flag, a
run id, a warehouse path, an `sql` statement): a wrong type per field, a missing field, a huge
number, a NaN token, deep nesting, bad UTF-8, a lone surrogate, an empty or truncated file. Every
one must give exit 2, nothing on stdout, exactly one short stderr line (`laya-cases: ...`) that
names the file (or the flag or field), no traceback, and a store whose tree hash is unchanged. A
dataset that `validate --strict` rejects must be refused by `run` before the model loads: the
runner here raises if it is ever constructed.

The CLI runs in-process through its console entry point (`main`, the one usage-error boundary), with
typer's CliRunner isolating stdout and stderr.
"""
from __future__ import annotations

import json
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest
from typer.testing import CliRunner

from helpers import ROOT, snapshot_tree
from laya_cases.runners.base import Capabilities, Runner

pytestmark = pytest.mark.slow   # 766 CLI invocations (issue 15's suite), ~20 s

DATASET = ROOT / "data" / "support.jsonl"
ANSWERS = ROOT / "data" / "support.answers.jsonl"
NAN, INF = float("nan"), float("inf")
HUGE_DIGITS = "9" * 5000            # beyond Python's int-string limit (4300 digits)
LONG_TEXT = "x" * 4000
MAX_LINE = 400                      # a message stays short whatever it quotes


class NeverLoads(Runner):
    """A runner whose model must never load: every case here is refused before that."""

    name = "never-loads-double"
    capabilities = Capabilities()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model was loaded for an input that should have been refused")


def _entry_point() -> Callable[[], None]:
    (point,) = [e for e in entry_points(group="console_scripts") if e.name == "laya-cases"]
    return point.load()


def run_cli(*args: Any) -> Tuple[Any, str, str]:
    """(exit status, stdout, stderr) of `laya-cases ARGS` run in this process through `main`."""
    main = _entry_point()
    with CliRunner().isolation() as (out, err, _):
        saved = sys.argv
        sys.argv = ["laya-cases", *[str(a) for a in args]]
        try:
            main()
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
        except BaseException:                       # noqa: BLE001 -- the test reports it as a traceback
            traceback.print_exc(file=sys.stderr)
            code = "exception"
        finally:
            sys.argv = saved
            sys.stderr.flush()
            sys.stdout.flush()
        return code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")


# ------------------------------------------------------------------------------ valid inputs
QUESTIONS = {"c": {"type": "choice", "instructions": "i", "criteria": ["a", "b"]},
             "n": {"type": "noul", "instructions": "i"},
             "s": {"type": "score", "instructions": "i", "criteria": ["x", "y", "z"]}}
ANSWER = {"c": {"type": "choice", "choice": "a", "answer_confidence": 0.8},
          "n": {"type": "noul", "noul": 0.7}, "s": {"type": "score", "score": 1.2}}
POLICY = {"version": 1, "rules": [{"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1,
                                   "min": 0.0}]}


def good_row(i: int = 0, answers: bool = False) -> dict:
    row = {"state": "s%d" % i, "questions": json.loads(json.dumps(QUESTIONS)),
           "expected": {"c": "a", "n": True, "s": 1}, "language": "en"}
    if answers:
        row["answers"] = json.loads(json.dumps(ANSWER))
        row["latency_ms"] = 3.5
    return row


def dumps(value: Any) -> str:
    """JSON text; a `Raw` value is pasted as is (huge digit strings, tokens json.dumps cannot write)."""
    marks: List[str] = []

    def walk(v: Any) -> Any:
        if isinstance(v, Raw):
            marks.append(v.text)
            return "\x00RAW%d\x00" % (len(marks) - 1)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    text = json.dumps(walk(value), ensure_ascii=True)
    for i, mark in enumerate(marks):
        text = text.replace('"\\u0000RAW%d\\u0000"' % i, mark)
    return text


@dataclass(frozen=True)
class Raw:
    text: str


def set_path(doc: Any, path: Tuple[Any, ...], value: Any) -> Any:
    """A copy of doc with doc[path] = value (`DELETE` removes the key)."""
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


DELETE = object()
SURROGATE = Raw('"bad \\ud800 text"')
HUGE = Raw(HUGE_DIGITS)
TYPE_MUTANTS = {"null": None, "true": True, "int": 1, "float": 1.5, "str": "x", "list": [], "object": {}}


# ------------------------------------------------------------------------------ the cases
@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[["Ctx"], Tuple[List[Any], Optional[str]]]     # -> (argv, what the line must name)
    xfail: Optional[str] = None


@dataclass
class Ctx:
    tmp: Path
    wh: Path
    report: Path         # a valid report JSON of the store's run `base`

    def write(self, name: str, content: Any) -> Path:
        path = self.tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path


def file_bodies(good: str) -> List[Tuple[str, Any]]:
    """Damage every JSON file can have, whatever it holds."""
    return [("empty", b""), ("blank", "\n \n"), ("not-json", "{nope"), ("truncated", good[: len(good) // 2]),
            ("bad-utf8", b'{"a": "\xff\xfe"}'), ("deep", "[" * 100000), ("huge-int", "[%s]" % HUGE_DIGITS),
            ("utf16", good.encode("utf-16"))]


# --- datasets, through `run` (strict validation, before the model loads) and answers through `ingest`
def _rows_file(ctx: Ctx, rows_text: List[str]) -> Path:
    return ctx.write("data.jsonl", "".join(line + "\n" for line in rows_text))


def _dataset_case(id_: str, row: Any, answers: bool, xfail: Optional[str] = None) -> Case:
    def build(ctx: Ctx):
        path = _rows_file(ctx, [dumps(good_row(0, answers)), row if isinstance(row, str) else dumps(row)])
        where = str(path) if id_ == "deep-row" else "%s:2" % path    # too deep: the reference names no line
        if answers:
            return ["ingest", path, "-w", ctx.wh, "--run-id", "new"], where
        return ["run", path, "--model", NeverLoads.name, "-w", ctx.wh, "--run-id", "new"], where
    return Case(("ingest-" if answers else "run-") + id_, build, xfail)


ROW_FIELDS = {   # field path -> mutant values that are wrong there (strict errors or structural errors)
    ("questions",): ["null", "true", "int", "str", "list"],
    ("expected",): ["null", "true", "int", "str", "list"],
    ("tags",): ["true", "int", "str"],
    ("questions", "c"): ["null", "true", "int", "str", "list"],
    ("questions", "c", "type"): ["null", "int", "str", "list", "object"],
    ("questions", "c", "instructions"): ["null"],
    ("questions", "c", "criteria"): ["null", "int", "str", "list", "object", "true"],
    ("questions", "s", "criteria"): ["null", "int", "str", "list", "object"],
    ("questions", "n", "criteria"): ["int", "str", "list"],
    ("questions", "n", "labels"): ["null", "int", "str", "list", "object"],
    ("questions", "c", "labels"): ["object"],
    ("questions", "c", "option_order"): ["null", "int", "str", "list", "object"],
    ("expected", "c"): ["null", "true", "int", "float", "list", "object", "str"],
    ("expected", "n"): ["null", "int", "float", "str", "list", "object"],
    ("expected", "s"): ["null", "true", "str", "list", "object"],
}
EXTRA_ROW_MUTANTS = {
    "missing-state": (("state",), DELETE), "missing-questions": (("questions",), DELETE),
    "missing-expected": (("expected",), DELETE), "unknown-qid": (("expected", "zz"), 1),
    "blank-instructions": (("questions", "c", "instructions"), "  "),
    "empty-instructions": (("questions", "c", "instructions"), ""),
    "duplicate-option": (("questions", "c", "criteria"), ["a", "a"]),
    "null-option": (("questions", "c", "criteria"), [None, "a"]),
    "null-level": (("questions", "s", "criteria"), ["x", None]),
    "noul-criteria-key": (("questions", "n", "criteria"), {"maybe": "x"}),
    "same-labels": (("questions", "n", "labels"), {"true": "a", "false": "a"}),
    "order-repeat": (("questions", "c", "option_order"), [0, 0]),
    "order-float": (("questions", "c", "option_order"), [0, 1.0]),
    "order-bool": (("questions", "c", "option_order"), [True, 0]),
    "label-not-option": (("expected", "c"), "zz"),
    "label-nan": (("expected", "c"), NAN), "noul-label-nan": (("expected", "n"), NAN),
    "score-negative": (("expected", "s"), -1), "score-too-high": (("expected", "s"), 3),
    "score-1e308": (("expected", "s"), 1e308), "score-nan": (("expected", "s"), Raw("NaN")),
    "score-inf": (("expected", "s"), Raw("Infinity")), "score-minus-inf": (("expected", "s"), Raw("-Infinity")),
    "score-400-digits": (("expected", "s"), Raw("9" * 400)),
    "score-huge-int": (("expected", "s"), HUGE), "state-huge-int": (("state",), HUGE),
    "tag-huge-int": (("tags",), [HUGE]), "label-huge-int": (("expected", "c"), HUGE),
    "state-surrogate": (("state",), SURROGATE), "qid-text-surrogate": (("questions", "c", "instructions"), SURROGATE),
    "label-surrogate": (("expected", "c"), SURROGATE),
    "long-label": (("expected", "c"), LONG_TEXT), "long-unknown-qids": (("expected",), {LONG_TEXT: 1, "y" * 900: 2}),
    "long-option-list": (("questions", "c", "criteria"), ["o%d" % i for i in range(400)] + ["o1"]),
    "long-score-label": (("expected", "s"), Raw("9" * 4000)),
}
ROW_SHAPES = {"list-row": "[1, 2]", "string-row": '"text"', "number-row": "3", "null-row": "null", "true-row": "true",
              "truncated-row": dumps(good_row(1))[:40], "deep-row": "[" * 100000, "nan-row": "NaN"}


def dataset_cases() -> List[Case]:
    cases = []
    for answers in (False, True):
        for path, kinds in ROW_FIELDS.items():
            for kind in kinds:
                if answers and path[0] == "questions" and len(path) > 1:
                    continue                          # body conventions are strict-only: `run` checks them
                if answers and path[0] == "expected" and len(path) > 1:
                    continue                          # label conventions too (ingest follows the reference)
                cases.append(_dataset_case("%s-%s" % (".".join(path), kind),
                                           set_path(good_row(1, answers), path, TYPE_MUTANTS[kind]), answers))
        for name, (path, value) in EXTRA_ROW_MUTANTS.items():
            if answers and name not in ("missing-state", "missing-questions", "missing-expected", "unknown-qid",
                                        "long-unknown-qids",
                                        "state-huge-int", "tag-huge-int", "label-huge-int", "score-huge-int",
                                        "state-surrogate", "label-surrogate", "qid-text-surrogate"):
                continue
            cases.append(_dataset_case(name, set_path(good_row(1, answers), path, value), answers))
        for name, text in ROW_SHAPES.items():
            cases.append(_dataset_case(name, text, answers))
    cases += [_whole_file_case(cmd, name, body) for cmd in ("run", "ingest")
              for name, body in file_bodies(dumps(good_row(0, True)) + "\n")
              if name not in ("huge-int",)]
    return cases


def _whole_file_case(cmd: str, name: str, body: Any) -> Case:
    def build(ctx: Ctx):
        path = ctx.write("data.jsonl", body)
        extra = ["--model", NeverLoads.name] if cmd == "run" else []
        return [cmd, path, *extra, "-w", ctx.wh, "--run-id", "new"], str(path)
    return Case("%s-file-%s" % (cmd, name), build)


ANSWER_MUTANTS = {
    ("answers",): ["null", "true", "int", "str", "list"],
    ("answers", "c"): ["null", "true", "int", "str", "list"],
    ("answers", "n", "noul"): ["null", "str", "list", "object"],
    ("answers", "s", "score"): ["str", "list", "object"],
    ("latency_ms",): ["true", "str", "list", "object"],
}
EXTRA_ANSWER_MUTANTS = {
    "latency-negative": (("latency_ms",), -1), "latency-nan": (("latency_ms",), Raw("NaN")),
    "latency-inf": (("latency_ms",), Raw("Infinity")), "latency-1e999": (("latency_ms",), Raw("1e999")),
    "latency-400-digits": (("latency_ms",), Raw("9" * 400)), "latency-huge-int": (("latency_ms",), HUGE),
    "noul-string-number": (("answers", "n", "noul"), "0.7"), "noul-400-digits": (("answers", "n", "noul"), Raw("9" * 400)),
    "score-400-digits": (("answers", "s", "score"), Raw("9" * 400)),
    "probability-text": (("answers", "c"), {"type": "choice", "choice": "a", "probabilities": {"a": "high"}}),
    "probability-400-digits": (("answers", "c"), {"type": "choice", "choice": "a",
                                                  "probabilities": {"a": Raw("9" * 400)}}),
    "answer-surrogate": (("answers", "c", "choice"), SURROGATE),
    "missing-answer": (("answers", "c"), DELETE),
}


def answers_cases() -> List[Case]:
    cases = []
    for path, kinds in ANSWER_MUTANTS.items():
        for kind in kinds:
            cases.append(_dataset_case("%s-%s" % (".".join(path), kind),
                                       set_path(good_row(1, True), path, TYPE_MUTANTS[kind]), True))
    for name, (path, value) in EXTRA_ANSWER_MUTANTS.items():
        cases.append(_dataset_case(name, set_path(good_row(1, True), path, value), True))

    def pairing(id_: str, answers_rows: int, dataset_rows: int, change: Optional[dict] = None) -> Case:
        def build(ctx: Ctx):
            rows = [dict(good_row(i, True), **(change or {}) if i == 1 else {}) for i in range(answers_rows)]
            answers = ctx.write("answers.jsonl", "".join(dumps(r) + "\n" for r in rows))
            data = ctx.write("dataset.jsonl", "".join(dumps(good_row(i)) + "\n" for i in range(dataset_rows)))
            return ["ingest", answers, "--dataset", data, "-w", ctx.wh, "--run-id", "new"], str(answers)
        return Case("ingest-dataset-" + id_, build)

    cases += [pairing("more-rows", 3, 2), pairing("fewer-rows", 1, 2),
              pairing("state-differs", 2, 2, {"state": "other"}), pairing("language-differs", 2, 2, {"language": "de"})]
    return cases


# --- gate policies and baselines, through `ingest` (which must refuse before it commits) and `report`
def _gate_file_case(kind: str, id_: str, content: Any, command: str = "ingest") -> Case:
    def build(ctx: Ctx):
        path = ctx.write("%s.json" % kind, content if isinstance(content, (str, bytes)) else dumps(content))
        flag = "--gate-policy" if kind == "policy" else "--baseline"
        extra = ["--baseline", ctx.report] if kind == "policy" else []
        if command == "ingest":
            return ["ingest", ANSWERS, "-w", ctx.wh, "--run-id", "new", flag, path, *extra], str(path)
        if command == "compare":                  # the saved report `base.json` is the candidate
            return ["compare", ctx.report, "-w", ctx.wh, flag, path, *extra], str(path)
        return ["report", "base", "-w", ctx.wh, flag, path, *extra], str(path)
    return Case("%s-%s-%s" % (command, kind, id_), build)


def _rule(**changes: Any) -> dict:
    rule = dict(POLICY["rules"][0])
    for key, value in changes.items():
        if value is DELETE:
            rule.pop(key)
        else:
            rule[key] = value
    return {"version": 1, "rules": [rule]}


POLICY_MUTANTS = {
    "top-list": [], "top-null": None, "top-string": "x", "extra-key": dict(POLICY, extra=1),
    "no-version": {"rules": POLICY["rules"]}, "no-rules": {"version": 1},
    "version-0": dict(POLICY, version=0), "version-2": dict(POLICY, version=2), "version-str": dict(POLICY, version="1"),
    "version-float": dict(POLICY, version=1.0), "version-true": dict(POLICY, version=True),
    "version-huge": dict(POLICY, version=HUGE),
    "rules-empty": dict(POLICY, rules=[]), "rules-object": dict(POLICY, rules={}), "rules-null": dict(POLICY, rules=None),
    "rule-null": dict(POLICY, rules=[None]), "rule-int": dict(POLICY, rules=[1]), "rule-list": dict(POLICY, rules=[[]]),
    "second-rule-bad": dict(POLICY, rules=[POLICY["rules"][0], "x"]),
    "no-slice": _rule(slice=DELETE), "no-metric": _rule(metric=DELETE), "no-min-count": _rule(min_count=DELETE),
    "no-limit": _rule(min=DELETE), "two-limits": _rule(max=1.0), "unknown-key": _rule(weight=1),
    "slice-null": _rule(slice=None), "slice-empty": _rule(slice={}), "slice-dim": _rule(slice={"lang": "en"}),
    "slice-blank": _rule(slice={"language": " "}), "slice-int": _rule(slice={"language": 1}),
    "slice-two": _rule(slice={"language": "en", "qid": "c"}), "slice-list": _rule(slice=["language", "en"]),
    "metric-null": _rule(metric=None), "metric-empty": _rule(metric=""), "metric-blank": _rule(metric="  "),
    "metric-int": _rule(metric=1), "metric-surrogate": _rule(metric=SURROGATE),
    "slice-surrogate": _rule(slice={"language": SURROGATE}),
    "count-0": _rule(min_count=0), "count-negative": _rule(min_count=-1), "count-float": _rule(min_count=1.0),
    "count-true": _rule(min_count=True), "count-str": _rule(min_count="1"), "count-null": _rule(min_count=None),
    "count-2^63": _rule(min_count=2 ** 63), "count-400-digits": _rule(min_count=Raw("9" * 400)),
    "count-huge": _rule(min_count=HUGE),
    "min-nan": _rule(min=Raw("NaN")), "min-inf": _rule(min=Raw("Infinity")), "min-1e999": _rule(min=Raw("1e999")),
    "min-str": _rule(min="0.5"), "min-true": _rule(min=True), "min-null": _rule(min=None),
    "min-400-digits": _rule(min=Raw("9" * 400)),
    "drop-negative": _rule(min=DELETE, max_drop=-0.1), "drop-nan": _rule(min=DELETE, max_drop=Raw("NaN")),
    "increase-str": _rule(min=DELETE, max_increase="1"),
    "alpha-on-min": _rule(significant_at=0.05), "alpha-0": _rule(min=DELETE, max_drop=0.0, significant_at=0),
    "alpha-1": _rule(min=DELETE, max_drop=0.0, significant_at=1), "alpha-true": _rule(min=DELETE, max_drop=0.0,
                                                                                    significant_at=True),
    "alpha-metric": _rule(min=DELETE, max_drop=0.0, significant_at=0.05, metric="ece"),
    "alpha-long-metric": _rule(min=DELETE, max_drop=0.0, significant_at=0.05, metric=LONG_TEXT),
    "count-4000-digits": _rule(min_count=Raw("9" * 4000)),
}
BASELINE_MUTANTS = {
    "empty-object": {}, "empty-overall": {"overall": {}}, "overall-list": {"overall": []},
    "overall-str": {"overall": "x"}, "overall-null": {"overall": None}, "top-list": [], "top-str": "x", "top-null": None,
    "top-int": 1, "metric-str": {"overall": {"choice_accuracy": "0.5"}},
    "metric-true": {"overall": {"choice_accuracy": True}}, "metric-null": {"overall": {"choice_accuracy": None}},
    "metric-object": {"overall": {"choice_accuracy": {}}}, "metric-list": {"overall": {"choice_accuracy": []}},
    "bare-str": {"choice_accuracy": "x"}, "bare-config": {"choice_accuracy": 0.5, "config": {}},
    "metric-huge": {"overall": {"choice_accuracy": HUGE}}, "name-surrogate": {"overall": {"a": 1, "b": SURROGATE}},
    "long-name-str": {"overall": {LONG_TEXT: "x"}},
}


def gate_file_cases() -> List[Case]:
    cases = []
    for command in ("ingest", "report", "compare"):
        for name, body in POLICY_MUTANTS.items():
            cases.append(_gate_file_case("policy", name, body, command))
        for name, body in BASELINE_MUTANTS.items():
            cases.append(_gate_file_case("baseline", name, body, command))
        for kind, good in (("policy", dumps(POLICY)), ("baseline", dumps({"overall": {"choice_accuracy": 0.5}}))):
            for name, body in file_bodies(good):
                cases.append(_gate_file_case(kind, "file-" + name, body, command))
    return cases


# --- flags, run ids, warehouse paths, sql
def _args_case(id_: str, args: List[Any], needle: Optional[str], xfail: Optional[str] = None) -> Case:
    def build(ctx: Ctx):
        filled = [ctx.wh if a == "{wh}" else ctx.report if a == "{report}" else a for a in args]
        return filled, needle
    return Case(id_, build, xfail)


BAD_NUMBERS = ["", "x", "nan", "NaN", "inf", "-inf", "1e999", "0x1p3z", "1,5", "9" * 400 + "e9999"]
BAD_PAIRS = ["ece", "=0.5", " =0.5", "ece=", "=", *("ece=" + n for n in BAD_NUMBERS if n)]


def flag_cases() -> List[Case]:
    cases = []
    for command in ("ingest", "report"):
        head = ["ingest", ANSWERS, "--run-id", "new"] if command == "ingest" else ["report", "base"]
        for flag in ("--min", "--max"):
            cases += [_args_case("%s%s-%r" % (command, flag, p), [*head, "-w", "{wh}", flag, p], flag + ": ")
                      for p in BAD_PAIRS]
        cases += [_args_case("%s--tolerance-%r" % (command, p), [*head, "-w", "{wh}", "--baseline", "{report}",
                                                                   "--tolerance", p], "--tolerance: ") for p in BAD_PAIRS]
        cases.append(_args_case(command + "-tolerance-without-baseline",
                                [*head, "-w", "{wh}", "--tolerance", "ece=0.1"], "--tolerance"))
        for flag in ("--min-accuracy", "--max-ece"):
            cases += [_args_case("%s%s-%r" % (command, flag, n), [*head, "-w", "{wh}", flag, n], flag)
                      for n in BAD_NUMBERS]
        cases.append(_args_case(command + "-baseline-no-run", [*head, "-w", "{wh}", "--baseline", "no-such-run"],
                                "no-such-run"))
        cases.append(_args_case(command + "-relative-policy-without-baseline", [], None))
    cases += [_args_case("compare--tolerance-%r" % p, ["compare", "base", "-w", "{wh}", "--baseline", "{report}",
                                                       "--tolerance", p], "--tolerance: ") for p in BAD_PAIRS]
    report = ["report", "base", "-w", "{wh}"]
    cases += [
        _args_case("report-slice", [*report, "--slice", "colour"], "--slice"),
        _args_case("report-view", [*report, "--view", "fancy"], "--view"),
        _args_case("report-bootstrap-negative", [*report, "--bootstrap", "-1"], "--bootstrap"),
        _args_case("report-bootstrap-text", [*report, "--bootstrap", "many"], "--bootstrap"),
        _args_case("report-seed-text", [*report, "--seed", "x"], "--seed"),
        _args_case("report-coverage-2", [*report, "--coverage", "2"], "coverage"),
        _args_case("report-coverage-nan", [*report, "--coverage", "nan"], "coverage"),
        _args_case("report-threshold-nan", [*report, "--threshold", "nan"], "threshold"),
        _args_case("report-score-within-negative", [*report, "--score-within", "-1"], "score"),
        _args_case("report-unknown-flag", [*report, "--no-such-flag"], "--no-such-flag"),
        _args_case("runs-format", ["runs", "-w", "{wh}", "--format", "xml"], "--format"),
        _args_case("sql-format", ["sql", "SELECT 1", "-w", "{wh}", "--format", "xml"], "--format"),
        _args_case("diff-show", ["diff", "base", "base", "-w", "{wh}", "--show", "-1"], "--show"),
        _args_case("diff-by", ["diff", "base", "base", "-w", "{wh}", "--by", "colour"], "--by"),
        _args_case("diff-flip-rate", ["diff", "base", "base", "-w", "{wh}", "--max-flip-rate", "nan"], "--max-flip-rate"),
    ]
    run = ["run", DATASET, "--model", NeverLoads.name, "-w", "{wh}", "--run-id", "new"]
    cases += [
        _args_case("run-min-confidence-2", [*run, "--min-confidence", "2"], "min_confidence"),
        _args_case("run-min-confidence-nan", [*run, "--min-confidence", "nan"], "min_confidence"),
        _args_case("run-on-error", [*run, "--on-error", "ignore"], "--on-error"),
        _args_case("run-crash-exit-code-1", [*run, "--crash-exit-code", "1"], "--crash-exit-code"),
        _args_case("run-crash-exit-code-999", [*run, "--crash-exit-code", "999"], "--crash-exit-code"),
        _args_case("run-runner-option-bare", [*run, "--runner-option", "x"], "--runner-option"),
        _args_case("run-runner-option-reserved", [*run, "--runner-option", "model=1"], "--runner-option"),
        _args_case("run-runner-option-long", [*run, "--runner-option", LONG_TEXT], "--runner-option"),
        _args_case("run-on-error-long", [*run, "--on-error", LONG_TEXT], "--on-error"),
        _args_case("report-min-long", [*report, "--min", "ece=" + LONG_TEXT], "--min"),
        _args_case("report-min-accuracy-long", [*report, "--min-accuracy", LONG_TEXT], "--min-accuracy"),
        _args_case("run-unknown-model", ["run", DATASET, "--model", "no-such-model", "-w", "{wh}"], "no-such-model"),
        _args_case("run-unknown-runner", ["run", DATASET, "--runner", "no-such-runner", "-w", "{wh}"], "no-such-runner"),
        _args_case("run-missing-dataset", ["run", "/nonexistent/d.jsonl", "--model", NeverLoads.name, "-w", "{wh}"],
                   "/nonexistent/d.jsonl"),
    ]
    return [c for c in cases if "relative-policy" not in c.id] + [_relative_policy_case(c) for c in ("ingest", "report")]


def _relative_policy_case(command: str) -> Case:
    def build(ctx: Ctx):
        path = ctx.write("policy.json", dumps(_rule(min=DELETE, max_drop=0.1)))
        head = ["ingest", ANSWERS, "--run-id", "new"] if command == "ingest" else ["report", "base"]
        return [*head, "-w", ctx.wh, "--gate-policy", path], "--baseline"
    return Case(command + "-relative-policy-without-baseline", build)


BAD_RUN_IDS = ["", " ", "-x", ".", "..", "a/b", "a\\b", "a..b", "x y", "a\nb", "a\tb", "é", "\u200b", "a*", "a?",
               "[a]", "{a}", "a'b", 'a"b', "a;b", "\x00", "a" * 129, LONG_TEXT, "9" * 400]


def run_id_cases() -> List[Case]:
    cases = []
    for rid in BAD_RUN_IDS:
        cases.append(_args_case("ingest-run-id-%r" % rid[:20], ["ingest", ANSWERS, "-w", "{wh}", "--run-id", rid],
                                None))
        cases.append(_args_case("report-run-id-%r" % rid[:20], ["report", rid, "-w", "{wh}"], None))
    for rid in ("nope", "base2", "BASE"):
        cases.append(_args_case("report-unknown-%s" % rid, ["report", rid, "-w", "{wh}"], rid))
        cases.append(_args_case("diff-unknown-%s" % rid, ["diff", "base", rid, "-w", "{wh}"], rid))
    cases.append(_args_case("ingest-existing-run-id", ["ingest", ANSWERS, "-w", "{wh}", "--run-id", "base"], "base"))
    cases.append(_args_case("run-existing-run-id", ["run", DATASET, "--model", NeverLoads.name, "-w", "{wh}",
                                                    "--run-id", "base"], "base"))
    return cases


def warehouse_cases() -> List[Case]:
    cases = []

    def at(id_: str, make: Callable[[Ctx], Path], commands=("report", "runs", "sql", "ingest")) -> None:
        for command in commands:
            def build(ctx: Ctx, command=command):
                path = make(ctx)
                args = {"report": ["report", "base"], "runs": ["runs"], "sql": ["sql", "SELECT count(*) FROM cases"],
                        "ingest": ["ingest", ANSWERS, "--run-id", "new"]}[command]
                return [*args, "-w", path], str(path)
            cases.append(Case("warehouse-%s-%s" % (id_, command), build))

    at("file", lambda ctx: ctx.write("afile", "not a warehouse"))
    at("file-parent", lambda ctx: ctx.write("afile2", "x") / "wh", ("report", "ingest"))
    for name in ("wh[1]", "wh*", "wh?", "wh{a,b}", "w h", "wh'q", 'wh"q', "wh\\b"):
        at("glob-" + name, lambda ctx, name=name: ctx.tmp / name, ("report",))     # no such run there

    def empty(ctx: Ctx):
        return ["report", "base", "-w", ""], "warehouse"
    cases.append(Case("warehouse-empty-string", empty))
    return cases


BAD_SQL = {
    "copy-to": "COPY (SELECT 1) TO '{wh}/cases/x.parquet'", "attach": "ATTACH '{wh}/x.db' AS x",
    "install": "INSTALL httpfs", "load": "LOAD httpfs", "export": "EXPORT DATABASE '{wh}/exp'",
    "two-statements": "SELECT 1; SELECT 2", "create": "CREATE TABLE t AS SELECT 1", "drop-view": "DROP VIEW cases",
    "insert": "INSERT INTO cases SELECT * FROM cases", "delete": "DELETE FROM cases", "update": "UPDATE cases SET qid = 'x'",
    "set": "SET threads = 1", "pragma": "PRAGMA enable_profiling", "call": "CALL pragma_version()",
    "syntax": "SELEC 1", "empty": "", "blank": "   ", "comment-only": "-- nothing", "unknown-table": "SELECT * FROM nope",
    "unknown-column": "SELECT nope FROM cases", "division-type": "SELECT 'a' + 1", "copy-from": "COPY cases FROM 'x.csv'",
"checkpoint": "CHECKPOINT", "vacuum": "VACUUM",
    "create-macro": "CREATE MACRO m(x) AS x", "detach": "DETACH DATABASE memory", "use": "USE nope",
}


def sql_cases() -> List[Case]:
    return [_sql_case(name, text) for name, text in BAD_SQL.items()]


def _sql_case(name: str, text: str) -> Case:
    def build(ctx: Ctx):
        return ["sql", text.replace("{wh}", str(ctx.wh)), "-w", ctx.wh], None
    return Case("sql-" + name, build)


CASES = dataset_cases() + answers_cases() + gate_file_cases() + flag_cases() + run_id_cases() + warehouse_cases() \
    + sql_cases()


def test_at_least_300_generated_cases_with_distinct_ids():
    assert len(CASES) >= 300
    assert len({c.id for c in CASES}) == len(CASES)


# ------------------------------------------------------------------------------ the check
@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Tuple[Path, Path]:
    from laya_cases.runners import registry

    base = tmp_path_factory.mktemp("bad-input")
    wh = base / "wh"
    code, _, err = run_cli("ingest", ANSWERS, "--dataset", DATASET, "-w", wh, "--run-id", "base")
    assert code == 0, err
    report = base / "base.json"
    code, _, err = run_cli("report", "base", "-w", wh, "--json", report)
    assert code == 0, err
    registry.register(NeverLoads.name, NeverLoads)
    yield wh, report
    registry.unregister(NeverLoads.name)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)]
                                               if c.xfail else []) for c in CASES])
def test_malformed_input_is_one_line_exit_2_and_the_store_is_untouched(store, tmp_path, case):
    wh, report = store
    args, needle = case.build(Ctx(tmp=tmp_path, wh=wh, report=report))
    args = [tmp_path.name if a == "new" else a for a in args]       # one case's mistake cannot block the next
    before = snapshot_tree(wh)
    code, out, err = run_cli(*args)
    assert "Traceback" not in err, err
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith("laya-cases: ") and len(lines[0]) <= MAX_LINE, lines[0]
    if needle is not None:
        assert needle in lines[0], (needle, lines[0])
    assert snapshot_tree(wh) == before


# ------------------------------------------------------------------------------ the edges of the classes
def test_run_refuses_what_validate_strict_rejects_with_its_line(store, tmp_path):
    """Item 2: the same `file:line field: message` as `validate --strict`, before the model loads."""
    wh, _ = store
    row = set_path(good_row(1), ("expected", "s"), 7)
    path = _rows_file(Ctx(tmp_path, wh, tmp_path), [dumps(good_row(0)), dumps(row)])
    code, _, strict_err = run_cli("validate", "--strict", path)
    finding = [line for line in strict_err.splitlines() if line.startswith(str(path))]
    assert code == 2 and len(finding) == 1
    code, out, err = run_cli("run", path, "--model", NeverLoads.name, "-w", wh)
    assert (code, out, err) == (2, "", "laya-cases: %s\n" % finding[0])


def test_largest_min_count_is_accepted_and_judged(store, tmp_path):
    """Item 1: min_count up to 2**63 - 1 is a valid policy; its rule fails on the count, no traceback."""
    wh, _ = store
    policy = Ctx(tmp_path, wh, tmp_path).write("policy.json", dumps(_rule(min_count=2 ** 63 - 1)))
    code, _, err = run_cli("report", "base", "-w", wh, "--gate-policy", policy)
    assert code == 1 and "Traceback" not in err
    assert "candidate count 13 is below min_count 9223372036854775807" in err
