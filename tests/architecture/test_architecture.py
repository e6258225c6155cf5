"""Small modules and functions stay small: no module over 400 lines, no function over 80, in laya_cases/
and cli/ (a module that no longer reads in one sitting splits by concern)."""
from __future__ import annotations

import ast

import pytest

from helpers import ROOT

MAX_MODULE, MAX_FUNCTION = 400, 80
SOURCES = sorted(p for folder in ("laya_cases", "cli") for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_and_function_sizes(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE, "%s has %d lines" % (path.name, len(text.splitlines()))
    long = ["%s (%d lines)" % (node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION]
    assert not long, "functions over %d lines in %s: %s" % (MAX_FUNCTION, path.name, ", ".join(long))
