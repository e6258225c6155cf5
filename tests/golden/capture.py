"""Golden outputs of the CLI: the bytes users see, pinned so refactors cannot change them.

`python tests/golden/capture.py` (re)writes tests/golden/expected/*; tests/cli/test_golden.py runs the
same script into a temporary folder and compares every file byte for byte. Inputs are files we
wrote (tests/golden/inputs/: the spec's T3 fixture records as answers files, a perturbed copy of
the bundled answers), so the goldens need no model and nothing outside the repository.

Each invocation becomes one file `<name>.out`: the exit code, stdout and stderr; files a command
writes (--json, --markdown) become `<name>.<ext>`.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from inprocess import run as cli  # noqa: E402  (tests/inprocess.py; this file also runs as a script)

INPUTS = HERE / "inputs"

FIXTURE_RUNS = ("edge1", "edge4", "ties")
POLICY = INPUTS / "policy.json"

# (name, argv after `laya-cases`, files it writes relative to the work folder)
def invocations():
    out = []
    for run in FIXTURE_RUNS + ("support", "support_b"):
        out += [
            ("%s.report" % run, ["report", run], []),
            ("%s.report_slices" % run, ["report", run, "--slice", "language", "--slice", "model", "--slice", "qid",
                                        "--slice", "tag", "--json", "%s.json" % run, "--markdown", "%s.md" % run],
             ["%s.json" % run, "%s.md" % run]),
            ("%s.report_table" % run, ["report", run, "--view", "table", "--slice", "language", "--slice", "qid"], []),
            ("%s.report_extras" % run, ["report", run, "--score-within", "0.5", "--coverage", "0.3", "--threshold",
                                        "0.6", "--bootstrap", "200", "--seed", "7", "--json", "%s.extras.json" % run],
             ["%s.extras.json" % run]),
            ("%s.gate_min" % run, ["report", run, "--min", "choice_accuracy=0.9", "--max-ece", "0.05"], []),
            ("%s.gate_policy" % run, ["report", run, "--gate-policy", str(POLICY), "--baseline", "support"], []),
        ]
    out += [
        ("diff", ["diff", "support", "support_b", "--by", "language", "--bootstrap", "300", "--json", "diff.json",
                  "--markdown", "diff.md"], ["diff.json", "diff.md"]),
        ("diff_flip_gate", ["diff", "support", "support_b", "--max-flip-rate", "0.01", "--bootstrap", "100"], []),
        ("compare_same", ["compare", "support", "--baseline", "support"], []),
        ("compare_b", ["compare", "support_b", "--baseline", "support", "--tolerance", "ece=0.02"], []),
        ("compare_policy", ["compare", "support_b", "--baseline", "support", "--gate-policy", str(POLICY)], []),
        ("compare_reference_doc", ["compare", "support", "--baseline", str(INPUTS / "support.laya_evals.json")], []),
        ("usage_unknown_run", ["report", "nope"], []),
        ("usage_bad_slice", ["report", "support", "--slice", "colour"], []),
        ("sql_query", ["sql", "SELECT run_id, count(*) AS n, sum(correct::INT) AS hits FROM cases "
                              "GROUP BY run_id ORDER BY run_id", "--format", "csv"], []),
    ]
    return out


def capture(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="golden-"))
    try:
        env = {"LAYA_CASES_WAREHOUSE": "wh", "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
        shutil.copytree(INPUTS, work / "inputs")
        for run in FIXTURE_RUNS + ("support", "support_b"):
            dataset = ["--dataset", "inputs/support.jsonl"] if run.startswith("support") else []
            code, _, err = cli(["ingest", "inputs/%s.answers.jsonl" % run, "--run-id", run, *dataset], work, env)
            assert code == 0, err
        for name, args, files in invocations():
            code, out, err = cli([a.replace(str(INPUTS), "inputs") for a in args], work, env)
            (dest / ("%s.out" % name)).write_text("exit %d\n--- stdout\n%s--- stderr\n%s" % (code, out, err),
                                                  encoding="utf-8")
            for f in files:
                shutil.copyfile(work / f, dest / f)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    capture(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "expected")
