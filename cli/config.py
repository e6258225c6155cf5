"""`[tool.laya-cases]` in pyproject.toml: gate settings kept next to the code, as ruff and pytest keep theirs.

The nearest pyproject.toml with a `[tool.laya-cases]` table, from the current directory upwards, gives
defaults to every command that has the option (click's default_map): the command line wins, then the
environment (LAYA_CASES_WAREHOUSE), then this file. A sub-table names one command (`[tool.laya-cases.report]`,
`[tool.laya-cases."massive run"]`) and wins over the top-level keys for it. Relative paths are relative to
the pyproject.toml. Keys are the long option names; an unknown key or a wrong type is one line, exit 2.

    [tool.laya-cases]
    warehouse = "eval/warehouse"
    slice = ["language"]
    baseline = "eval/baseline.json"
    tolerance = {choice_accuracy = 0.02, ece = 0.02}
    gate-policy = "eval/policy.json"
    min-accuracy = 0.8
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from laya_cases.core.errors import UsageError

#: key -> (click parameter name, kind): the settings a team keeps in its repository
KEYS: Dict[str, Tuple[str, str]] = {
    "warehouse": ("warehouse", "path"), "slice": ("slice_", "strings"), "baseline": ("baseline", "file-or-id"),
    "tolerance": ("tolerance_pairs", "pairs"), "gate-policy": ("gate_policy", "path"),
    "min-accuracy": ("min_accuracy", "number"), "max-ece": ("max_ece", "number"), "min": ("min_pairs", "pairs"),
    "max": ("max_pairs", "pairs"), "max-flip-rate": ("max_flip_rate", "number"), "bootstrap": ("bootstrap", "int"),
    "seed": ("seed", "int"), "by": ("by", "string"),
}
#: `compare` names its tolerance option's parameter `tolerance`
ALIASES = {"tolerance_pairs": ("tolerance",)}


def find(start: Path) -> Optional[Tuple[Path, Dict[str, Any]]]:
    """(pyproject.toml, its [tool.laya-cases] table) nearest `start`, or None."""
    import tomllib

    for folder in [start, *start.parents]:
        path = folder / "pyproject.toml"
        try:
            if not path.is_file() or b"laya-cases" not in path.read_bytes():   # most need no TOML parse
                continue
            with open(path, "rb") as handle:
                table = tomllib.load(handle).get("tool", {}).get("laya-cases")
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError("%s: %s" % (path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
        if table is not None:
            if not isinstance(table, dict):
                raise UsageError("%s: [tool.laya-cases] must be a table" % path)
            return path, table
    return None


def _value(path: Path, where: str, key: str, value: Any) -> Any:
    """A TOML value as the command line would have given it (strings for pairs, paths resolved)."""
    kind = KEYS[key][1]
    base = path.parent

    def bad(expected: str) -> UsageError:
        return UsageError("%s: %s.%s must be %s, got %r" % (path, where, key, expected, value))
    if kind in ("path", "file-or-id", "string"):
        if not isinstance(value, str) or not value:
            raise bad("a non-empty string")
        if kind == "path" and not value.startswith("delta+") and "://" not in value:
            return str(base / os.path.expanduser(value))
        if kind == "file-or-id" and (base / value).exists():
            return str(base / value)
        return value
    if kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise bad("a list of strings")
        return list(value)
    if kind == "pairs":
        if not isinstance(value, dict) or not all(_is_number(v) for v in value.values()):
            raise bad("a table of metric = number")
        return ["%s=%r" % (k, v) for k, v in value.items()]
    if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool)):
        raise bad("an integer")
    if kind == "number" and not _is_number(value):
        raise bad("a number")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _settings(path: Path, table: Dict[str, Any], where: str) -> Dict[str, Any]:
    out = {}
    for key, value in table.items():
        if key not in KEYS:
            raise UsageError("%s: unknown key %s.%s (known: %s)" % (path, where, key, ", ".join(sorted(KEYS))))
        out[KEYS[key][0]] = _value(path, where, key, value)
    return out


def default_map(command, found: Tuple[Path, Dict[str, Any]]) -> Dict[str, Any]:
    """click's default_map for the group `command` from find()'s (pyproject.toml, [tool.laya-cases])."""
    path, table = found
    sections = {k: v for k, v in table.items() if isinstance(v, dict) and k not in KEYS}
    top = _settings(path, {k: v for k, v in table.items() if k not in sections}, "tool.laya-cases")
    if "warehouse" in top and os.environ.get("LAYA_CASES_WAREHOUSE"):
        del top["warehouse"]                  # the environment wins over the file, as the flag wins over both
    own = {name: _settings(path, body, 'tool.laya-cases."%s"' % name) for name, body in sections.items()}
    seen = set()

    def walk(group, prefix: str) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for name, sub in getattr(group, "commands", {}).items():
            full = (prefix + " " + name).strip()
            if getattr(sub, "commands", None):
                out[name] = walk(sub, full)
                continue
            params = {p.name for p in sub.params}
            wanted = dict(top, **own.get(full, {}))
            seen.add(full)
            values = {}
            for param, value in wanted.items():
                for candidate in (param,) + ALIASES.get(param, ()):
                    if candidate in params:
                        values[candidate] = value
            out[name] = values
        return out
    result = walk(command, "")
    unknown = sorted(set(own) - seen)
    if unknown and len(seen) > 1:        # only when every command is registered can a name be judged
        raise UsageError("%s: [tool.laya-cases.%s] names no command" % (path, unknown[0]))
    return result
