"""Golden outputs of the CLI: the bytes users see, pinned so refactors cannot change them.

`python tests/golden/capture.py` (re)writes tests/golden/expected/*; tests/cli/test_golden.py runs the
same script into a temporary folder and compares every file byte for byte. Inputs are files we
wrote (tests/golden/inputs/: the spec's T3 fixture records as answers files, a perturbed copy of
the bundled answers), so the goldens need no model and nothing outside the repository.

Each invocation becomes one file `<name>.out`: the exit code, stdout and stderr; files a command
writes (--json, --markdown) become `<name>.<ext>`.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Tuple

HERE = Path(__file__).resolve().parent
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


def cli(args, cwd, env) -> Tuple[int, str, str]:
    """(exit status, stdout, stderr) of `laya-cases ARGS` in `cwd` with `env` set, run in this process through
    the console entry point (`main`, the one usage-error boundary) as tests/cli/test_bad_input.py does: one
    interpreter start for every invocation, not one each. Warnings print as in a fresh interpreter (Python's
    default filters, each one once per invocation), and an uncaught exception is a traceback and exit 1."""
    import traceback
    import warnings

    from typer.testing import CliRunner

    from laya_cases_cli.app import main

    here, argv, shown, environ = os.getcwd(), sys.argv, warnings.showwarning, dict(os.environ)
    with _restored(environ), CliRunner().isolation(env=env) as (out, err, _), warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category in _DEFAULT_WARNING_FILTERS:
            warnings.simplefilter(action, category)
        os.chdir(cwd)
        sys.argv = ["laya-cases", *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = _exit_status(exc.code)
        except BaseException:                       # noqa: BLE001 -- as the interpreter reports it
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            sys.argv, warnings.showwarning = argv, shown
            os.chdir(here)
            sys.stderr.flush()
            sys.stdout.flush()
        return code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")


@contextmanager
def _restored(environ: Dict[str, str]):
    """os.environ as it was afterwards: what a command sets (main's HF_*_PROGRESS_BARS) ends with it."""
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)


#: What a fresh interpreter ignores (python -W's defaults, outside __main__); every other warning prints.
_DEFAULT_WARNING_FILTERS = (("ignore", DeprecationWarning), ("ignore", PendingDeprecationWarning),
                            ("ignore", ImportWarning), ("ignore", ResourceWarning))


def _exit_status(code) -> int:
    """The status the interpreter exits with for `sys.exit(code)` (a message goes to stderr, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


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
