"""The small datasets we wrote ourselves (`data/` in a checkout), shipped in the wheel as the
`laya_cases_data` package so the help examples and the presentation checks work after `pip install`."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

_CHECKOUT = Path(__file__).resolve().parents[2] / "data"


def root() -> Path:
    """The bundled data folder: the installed `laya_cases_data` package, else this checkout's data/."""
    from importlib.util import find_spec

    try:                       # a namespace package (no __init__.py): its search locations, not resources
        spec = find_spec("laya_cases_data")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location, "support.jsonl").is_file():
            return Path(location)
    return _CHECKOUT


def path(*parts: str) -> Path:
    return root().joinpath(*parts)


def names() -> List[str]:
    """The bundled files, relative to the data folder (e.g. support.jsonl, relevance/prompt.txt)."""
    base = root()
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*")
                  if p.is_file() and p.suffix in (".jsonl", ".json", ".txt"))


def hint(missing: str) -> Optional[str]:
    """For a missing dataset path whose name is a bundled file: where the bundled copy is."""
    name = Path(missing).name
    for rel in names():
        if Path(rel).name == name:
            return "a copy ships with laya-cases: %s (`laya-cases dataset examples` copies them here)" % path(rel)
    return None
