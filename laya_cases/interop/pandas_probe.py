"""pyarrow without its pandas import, until something really imports pandas.

pyarrow's first conversion from Python or numpy (pa.array, Table.from_pylist, ...) asks whether
pandas is installed by importing it: ~0.3 s of CPU, a fifth of `ingest` of 300k decisions
(docs/schema.md: 2.28 -> 1.90 s, median of 6). laya-cases hands pyarrow no pandas objects.
`skip()` (called by `ingest`; `install()` by the CLI, for every command) answers pyarrow's one
question "not installed" while pandas is not imported, and re-arms pyarrow the moment anything
imports pandas (a user's own code, `datasets`, a to_pandas() call): from then on pyarrow sees pandas
objects exactly as it always does (tests/interop/test_pandas_probe.py).
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Any, Callable, Optional

_asked = False


class _Refuse:
    """A meta path finder for the probe alone: pandas cannot be imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")


class _After:
    """A meta path finder that waits for the first import of module `name`, then calls `then()`."""

    def __init__(self, name: str, then: Callable[[], Any]):
        self.name, self.then = name, then

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Optional[Any]:
        if name != self.name or self not in sys.meta_path:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)         # the other finders' answer
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                run(module)
                try:
                    self.then()
                except Exception:            # noqa: BLE001 -- never fail the import itself
                    pass

            try:
                spec.loader.exec_module = exec_module
            except AttributeError:           # a loader that cannot be wrapped: `then` is not called
                pass
        return spec


def _pandas_api() -> Any:
    import pyarrow.lib

    return getattr(pyarrow.lib, "_pandas_api", None)


def skip() -> None:
    """Answer pyarrow's pandas probe "not installed" if pandas is not imported yet (once per process)."""
    global _asked
    if _asked or "pandas" in sys.modules:
        return
    _asked = True
    import pyarrow as pa

    if not hasattr(type(_pandas_api()), "compat"):     # a pyarrow without this shim: it imports pandas
        return
    refuse = _Refuse()
    sys.meta_path.insert(0, refuse)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(refuse)
    if "pandas" not in sys.modules:         # pyarrow imports pandas again (now loaded) and uses it
        sys.meta_path.insert(0, _After("pandas", lambda: _pandas_api().compat))


def install() -> None:
    """skip() as soon as pyarrow is imported (now, if it is): for a process that imports pyarrow lazily
    (the CLI), at no cost to a command that never does."""
    if "pyarrow" in sys.modules:
        skip()
    elif not _asked:
        sys.meta_path.insert(0, _After("pyarrow", skip))
