"""Importing this module registers every command on the app (one module per area)."""
from laya_cases_cli import store  # noqa: F401
from laya_cases_cli import gates  # noqa: F401
from laya_cases_cli import export  # noqa: F401
from laya_cases_cli import run  # noqa: F401
from laya_cases_cli import relevance  # noqa: F401
from laya_cases_cli import massive  # noqa: F401
from laya_cases_cli import shortlist  # noqa: F401
from laya_cases_cli import presentation  # noqa: F401
from laya_cases_cli import robustness  # noqa: F401
from laya_cases_cli import dataset  # noqa: F401
from laya_cases_cli import crosslingual  # noqa: F401
from laya_cases_cli import serve  # noqa: F401
from laya_cases_cli.app import app

# `laya-cases --help` lists the commands in this order: the everyday flow first, tools last.
_ORDER = ["run", "ingest", "report", "runs", "sql", "plot", "diff", "compare", "validate", "dataset", "massive",
          "export-onnx", "gc", "check"]


def _name(info) -> str:
    return info.name or info.callback.__name__.replace("_", "-")


app.registered_commands.sort(key=lambda info: _ORDER.index(_name(info)) if _name(info) in _ORDER else len(_ORDER))
