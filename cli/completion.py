"""Shell completion (`laya-cases --install-completion`), attached in one place to the built command tree
(app._App.click), from what each parameter already says in --help:
- a RUN argument or option (metavar RUN, RUN_A, RUN_B, RUN..., and calibrate's DEV and TEST) completes
  the store's run ids (-w, else $LAYA_CASES_WAREHOUSE, else ./warehouse);
- a metavar that lists its values (`fail|skip`, `text|table`, `table|csv|json`) completes those values;
- DIM completes the slice dimensions, KIND the plot kinds, --model and --runner the runner names.

The values stay plain strings checked by the command (its one-line refusal names them), so completion
changes no error message and no output."""
from __future__ import annotations

from typing import Any, Callable, List, Optional

RUN_METAVARS = ("RUN", "RUN_A", "RUN_B", "RUN...", "DEV", "TEST")


def run_ids(ctx: Any) -> List[str]:
    """The committed run ids of the warehouse the command line names so far."""
    from laya_cases.store.layout import resolve_root
    from laya_cases.store.warehouse import Warehouse

    option = ctx.params.get("warehouse") if ctx is not None else None
    try:
        return Warehouse(resolve_root(str(option) if option else None)).run_ids()
    except Exception:                # noqa: BLE001 -- completion never fails the shell
        return []


def values_of(param: Any) -> Optional[Callable[[Any], List[str]]]:
    """What completes `param`, or None (a path, a number, free text). Nothing is imported until the
    shell asks: the tree is built on every call."""
    metavar = getattr(param, "metavar", None) or ""
    opts = set(getattr(param, "opts", ()))
    if metavar in RUN_METAVARS:
        return run_ids
    if "|" in metavar and " " not in metavar:
        choices = metavar.split("|")
        return lambda ctx: choices
    if metavar == "DIM":
        return _dimensions
    if metavar == "KIND" and "--kind" in opts:
        return _plot_kinds
    if opts & {"--model", "--runner"}:
        return _runner_names
    return None


def _dimensions(ctx: Any) -> List[str]:
    from laya_cases.report.build import DIMENSIONS
    return list(DIMENSIONS)


def _plot_kinds(ctx: Any) -> List[str]:
    from laya_cases.views.plot_kinds import KINDS
    return list(KINDS)


def _runner_names(ctx: Any) -> List[str]:
    from laya_cases.runners import registry
    return registry.names()


def attach(command: Any) -> Any:
    """Give every parameter of `command` and its subcommands what completes it; returns `command`."""
    for sub in (getattr(command, "commands", None) or {}).values():
        attach(sub)
    for param in getattr(command, "params", ()):
        values = values_of(param)
        if values is not None and getattr(param, "_custom_shell_complete", None) is None:
            param._custom_shell_complete = _completer(values)       # noqa: SLF001 -- click's own hook
    return command


def _completer(values: Callable[[Any], List[str]]) -> Callable[[Any, Any, str], List[str]]:
    def complete(ctx: Any, param: Any, incomplete: str) -> List[str]:
        return [v for v in values(ctx) if v.startswith(incomplete)]
    return complete
