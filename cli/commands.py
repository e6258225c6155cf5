"""Importing this module registers every command on the app (one module per area)."""
from laya_cases_cli import store  # noqa: F401
from laya_cases_cli import gates  # noqa: F401
from laya_cases_cli import export  # noqa: F401
from laya_cases_cli import run  # noqa: F401
