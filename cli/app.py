"""The `laya-cases` command line: the app object, its usage-error boundary and small helpers.

Commands live in one module per area (store.py: validate/ingest/runs/report/sql/plot/gc/check;
run.py: run/massive; gates.py: compare/diff; export.py: export-onnx) and register on `app` when
commands.py imports them; shared flags are in options.py, every printer in console.py.

The usage-error boundary is here, once: every command is registered through `_App.command`, which
turns a `laya_cases.UsageError` into one `laya-cases: <message>` line on stderr and exit 2 however
the app is entered (main(), `python -m laya_cases_cli`, typer's CliRunner); a failed gate exits 1.
"""
from __future__ import annotations

import functools
import os
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, NoReturn, Optional

import typer
from typer.core import TyperGroup

from laya_cases.core.errors import UsageError
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import resolve_root
from laya_cases_cli import console


#: the options that write a file or folder: each is checked by laya_cases/store/outputs.py before the command
#: runs (tests/cli/test_output_paths.py fails when a FILE/DIR option is neither here nor a declared input)
OUTPUT_FLAGS = frozenset({"--json", "--markdown", "--html", "--out", "--junit", "--summary", "--csv"})


def check_outputs() -> None:
    """Refuse every output path of the running command that the store owns or that cannot be written,
    before the command does anything (a model load, a commit)."""
    from typer._click.globals import get_current_context

    from laya_cases.store.outputs import refuse_output, store_roots

    console.STDOUT["taken_by"] = None
    ctx = get_current_context(silent=True)
    if ctx is None:
        return
    outputs = [(p, ctx.params.get(p.name)) for p in ctx.command.params
               if OUTPUT_FLAGS.intersection(getattr(p, "opts", ())) and ctx.params.get(p.name) is not None]
    if not outputs:
        return
    roots = store_roots(ctx.params.get("warehouse"))
    dashed = []
    for param, value in outputs:
        flag = next(o for o in param.opts if o in OUTPUT_FLAGS)
        folder = getattr(param, "metavar", None) == "DIR"
        if is_stdout(value):
            if folder:
                raise UsageError("%s -: stdout is one stream, not a folder; name a directory" % flag)
            dashed.append(flag)
        refuse_output(value, flag, roots, folder=folder)
    if len(dashed) > 1:
        raise UsageError("%s %s `-`: only one output can go to stdout"
                         % (" and ".join(dashed), "both say" if len(dashed) == 2 else "all say"))
    console.STDOUT["taken_by"] = dashed[0] if dashed else None


def is_stdout(path) -> bool:
    """`-` for a FILE option means stdout (click's convention)."""
    return path is not None and str(path) == "-"


@contextmanager
def output_file(path: Path) -> Iterator[Path]:
    """The path a library writer writes to: the FILE option itself, or for `-` a temporary file whose
    bytes go to stdout once the writer is done."""
    if not is_stdout(path):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="laya-cases-") as tmp:
        target = Path(tmp) / "out"
        yield target
        console.file_to_stdout(target.read_bytes())


def usage_boundary(fn):
    """A command callback whose UsageError is the one-line message and exit 2; its output paths are
    checked first."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            check_outputs()
            return fn(*args, **kwargs)
        except UsageError as exc:
            console.note(str(exc))
            raise typer.Exit(2)
    return wrapper


class _App(typer.Typer):
    """typer.Typer whose commands all pass through `usage_boundary`; `-h` is `--help` everywhere."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(*args, **kwargs)
        self._built: Any = None

    def click(self):
        """The click command tree, built once per set of registered commands (typer rebuilds it on every
        call: ~40 ms with two dozen commands, and `main` reads it twice), with shell completion attached
        (completion.py)."""
        key = (len(self.registered_commands), len(self.registered_groups))
        if self._built is None or self._built[0] != key:
            from laya_cases_cli.completion import attach

            self._built = (key, attach(typer.main.get_command(self)))
        return self._built[1]

    def __call__(self, *args, **kwargs):
        console.STDOUT["taken_by"] = None           # a command's `-` output takes stdout (check_outputs)
        return self.click()(*args, **kwargs)      # pretty_exceptions_enable=False: typer's hook adds nothing

    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)

        def decorator(fn):
            register(usage_boundary(fn))
            return fn
        return decorator


class _Listed(TyperGroup):
    """The top-level group: `laya-cases --help` lists commands and groups in ORDER (cli/commands.py sets it),
    the everyday flow first; anything unlisted follows in registration order."""

    ORDER: list = []

    def list_commands(self, ctx) -> list:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: self.ORDER.index(n) if n in self.ORDER else len(self.ORDER))


app = _App(
    cls=_Listed,
    help="laya-cases: every decision a model makes on a labelled dataset is a Parquet row in a "
         "warehouse; every metric is SQL over those rows.\n\n"
         "\b\nA first session:\n"
         "  laya-cases run data/support.jsonl     # commit a run, print its report\n"
         "  laya-cases runs                       # list the committed runs\n"
         "  laya-cases report RUN --view table --slice language\n"
         "  laya-cases sql \"SELECT qid, avg(correct::INT) FROM cases GROUP BY 1\"\n"
         "  laya-cases diff RUN_A RUN_B --by language\n\n"
         "The warehouse is ./warehouse unless -w DIR or LAYA_CASES_WAREHOUSE names another. Exit codes: "
         "0 ok, 1 a gate failed, 2 a usage error. `laya-cases COMMAND --help` for each command.",
    no_args_is_help=True, pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None)       # help texts show [default: ...] literally, not as markup


def _print_version(value: bool) -> None:
    if value:
        from laya_cases.core.version import __version__
        console.out("laya-cases %s" % __version__)
        raise typer.Exit(0)


WAREHOUSE_ENV = "LAYA_CASES_WAREHOUSE"


def _warehouse_for_the_command(ctx: typer.Context, value: Optional[str]) -> None:
    """`laya-cases -w DIR COMMAND`: DIR becomes the command's warehouse as LAYA_CASES_WAREHOUSE would (the
    command's own -w still wins), for this invocation only: the variable is put back when the app's context
    closes, so a test process (typer's CliRunner) keeps its own environment."""
    if value is None:
        return
    from laya_cases_cli.options import checked_warehouse

    before = os.environ.get(WAREHOUSE_ENV)
    os.environ[WAREHOUSE_ENV] = checked_warehouse(value)
    ctx.call_on_close(functools.partial(_put_back, WAREHOUSE_ENV, before))


def _put_back(name: str, value: Optional[str]) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@app.callback()
def _root(version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                       help="Print the version and exit."),
          warehouse: Optional[str] = typer.Option(None, "--warehouse", "-w", metavar="DIR", expose_value=False,
                                                  callback=_warehouse_for_the_command,
                                                  help="The warehouse of the command that follows, before its "
                                                       "name: `laya-cases -w DIR runs` is `laya-cases runs -w DIR`.")
          ) -> None:
    """laya-cases (the app's help text is given above)."""


def fail(message: str) -> NoReturn:
    """A usage error raised from a command: one line, exit 2 (see usage_boundary)."""
    raise UsageError(message)


def write_text(path: Optional[Path], content: str, what: str) -> None:
    """Write a command's output file; `-` writes it to stdout."""
    if path is None:
        return
    if is_stdout(path):
        console.file_to_stdout(content)
        return
    check_outputs()                         # again, at the write: defence in depth
    try:
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        fail("cannot write %s %r: %s" % (what, str(path), exc))


def warehouse_of(option: Optional[Path]) -> Warehouse:
    """The warehouse named by -w / $LAYA_CASES_WAREHOUSE / ./warehouse; one line, exit 2, when that
    path exists and is not a directory (a missing one is an empty warehouse until a run is written)."""
    wh = Warehouse(resolve_root(str(option) if option else None))
    if wh.root.exists() and not wh.root.is_dir():
        fail("warehouse %s is not a directory" % wh.root)
    return wh


#: Commands whose own module is the only one imported when they are invoked: `laya-cases runs` starts in
#: about the time DuckDB's own import takes (bench/startup_bench.py, tests/cli/test_startup.py). Anything else (other
#: commands, --help, a bare or unknown name) imports every command module through cli/commands.py.
LIGHT_COMMANDS = {name: "store" for name in ("runs", "sql", "report", "validate", "ingest", "plot", "gc", "check")}


def register_commands(argv) -> None:
    """Register the command `argv` names (its module only, when it is a light one), else all commands."""
    import importlib

    while argv[:1] in (["-w"], ["--warehouse"]) or (argv and argv[0].startswith("--warehouse=")):
        argv = argv[1 if "=" in argv[0] else 2:]      # the app's own -w DIR comes before the command's name
    name = argv[0] if argv and not argv[0].startswith("-") else None
    if name in LIGHT_COMMANDS:
        importlib.import_module("laya_cases_cli." + LIGHT_COMMANDS[name])
        if any((info.name or info.callback.__name__.replace("_", "-")) == name for info in app.registered_commands):
            return
    import laya_cases_cli.commands  # noqa: F401  (registers every command module)


def main() -> None:
    """Entry point. A usage error from argument parsing is one line and exit 2, like every other."""
    import sys

    from laya_cases.interop import pandas_probe

    pandas_probe.install()                  # no command needs pyarrow's pandas import (~0.3 s of CPU)
    warnings.showwarning = _one_line_warning
    if not sys.stderr.isatty():
        # Hugging Face libraries draw their own bars on stderr ("Loading weights", "Generating train split",
        # "Saving the dataset"); in a log or a pipe they are noise beside our one-line notes.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    register_commands(sys.argv[1:])
    sys.exit(_run())


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A library's warning (e.g. laya's on a checkpoint's temperatures) as one line on stderr, like our own
    messages: Python's default adds the warning's source file and line, which mean nothing to a user."""
    console.note("warning: %s" % str(message).strip().replace("\n", " "))


def _config_defaults():
    """Defaults from the nearest pyproject.toml's [tool.laya-cases] (cli/config.py), or None."""
    from laya_cases_cli import config

    found = config.find(Path.cwd())
    return None if found is None else config.default_map(app.click(), found)


def _run() -> int:
    import sys

    from typer._click import exceptions as click_errors

    try:
        code = app(standalone_mode=False, prog_name="laya-cases", default_map=_config_defaults())   # also under -m
    except click_errors.NoArgsIsHelpError as exc:      # bare `laya-cases`: the help, exit 0
        if exc.ctx is not None:
            console.out(exc.ctx.get_help())
        return 0
    except click_errors.UsageError as exc:
        hint = " (see `%s --help`)" % exc.ctx.command_path if exc.ctx else ""
        console.note("%s%s" % (exc.format_message(), hint))
        return 2
    except click_errors.ClickException as exc:
        console.note(exc.format_message())
        return exc.exit_code
    except UsageError as exc:                          # outside a command callback (they have their own)
        console.note(str(exc))
        return 2
    except KeyboardInterrupt:                          # Ctrl-C elsewhere than in `run` (which says more)
        console.note("interrupted")
        return 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    main()
