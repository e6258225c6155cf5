"""laya-cases: an evaluation warehouse for typed-decision models.

Data flows dataset -> runner -> Arrow decision rows -> Parquet warehouse -> sql/ -> report/gate.
In Python (docs/python.md):

    import laya_cases as lc
    wh = lc.open("warehouse")
    wh.runs(); wh.cases("demo", lazy=True); wh.report("demo"); wh.diff("a", "b"); wh.plot("demo")
"""

__all__ = ["open", "Store", "UsageError", "from_hf", "run_to_hf", "__version__"]
_LAZY = {"open": "api", "Store": "api",      # imported on first use: `import laya_cases` loads no engine
         "from_hf": "interop.convert", "run_to_hf": "api"}  # Hugging Face datasets (docs/datasets.md)

from laya_cases.core.errors import UsageError  # noqa: E402  (the one exception the CLI prints, exit 2)
from laya_cases.core.version import __version__  # noqa: E402


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
