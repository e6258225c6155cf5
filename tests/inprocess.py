"""`laya-cases ARGS` run in the test process through its console entry point (`main`, the one usage-error
boundary), as tests/cli/test_bad_input.py does: one interpreter start for a whole test file, not one per
command, where a test is about what a command prints and exits with rather than about the process. Tests of
the process itself (kill -9, concurrent writers, offline model loads, startup imports) keep a subprocess
(helpers.cli)."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env: Optional[Dict[str, str]] = None, check: bool = False) -> subprocess.CompletedProcess:
    """helpers.cli's call and result, in this process: from the repository root, with `env` added."""
    code, out, err = run([str(a) for a in args], ROOT, env or {})
    if check and code != 0:
        raise AssertionError("laya-cases %s failed (%d): %s" % (" ".join(args), code, err))
    return subprocess.CompletedProcess(list(args), code, out, err)


def run(args, cwd, env) -> Tuple[int, str, str]:
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
