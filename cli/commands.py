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
from laya_cases_cli import rank  # noqa: F401
from laya_cases_cli import calibrate  # noqa: F401
from laya_cases_cli import stability  # noqa: F401
from laya_cases_cli.app import _Listed

# `laya-cases --help` lists the commands in this order: the everyday flow first, then the benchmarks, tools last.
_Listed.ORDER = ["run", "ingest", "report", "runs", "sql", "plot", "diff", "compare", "rank", "calibrate", "stability",
                 "audit", "relabel", "validate", "dataset",
                 "massive", "crosslingual", "relevance", "robustness", "shortlist", "presentation", "banking77",
                 "export", "import", "export-onnx", "serve", "gc", "check"]
