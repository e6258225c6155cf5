"""laya-cases: an evaluation warehouse for typed-decision models.

Data flows dataset -> runner -> Arrow decision rows -> Parquet warehouse -> sql/ -> report/gate.
In Python (docs/python.md):

    import laya_cases as lc
    wh = lc.open("warehouse")
    wh.runs(); wh.cases("demo", lazy=True); wh.report("demo"); wh.diff("a", "b"); wh.plot("demo")
"""

__version__ = "0.1.0"
__all__ = ["open", "Store", "UsageError", "from_hf", "run_to_hf", "__version__"]
_LAZY = {"open": "api", "Store": "api",      # imported on first use: `import laya_cases` loads no engine
         "from_hf": "convert", "run_to_hf": "convert"}     # Hugging Face datasets in and out (docs/datasets.md)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


class UsageError(ValueError):
    """Bad input from the user (file, row, field, flag). The CLI prints it on one line, exit 2."""


def shorten(text: str, limit: int = 80) -> str:
    """User input echoed in a message (a run id, a label, a path): at most about `limit` characters,
    the cut said, so one huge value cannot bury the line it is quoted in."""
    if len(text) <= limit:
        return text
    return "%s... (%d characters)" % (text[:max(limit - 20, 10)], len(text))


def shorten_path(text: str, limit: int = 200) -> str:
    """A file's path in a message: whole up to `limit` characters (a temporary directory's path is often
    over 80), else its end, which names the file."""
    if len(text) <= limit:
        return text
    return "...%s (%d characters)" % (text[-(limit - 25):], len(text))
