"""The rules of docs/architecture.md, checked on the import map of laya_cases/ (tests/layers.py reads it
from the code: every import statement, at module level or inside a function)."""
from __future__ import annotations

import ast
import re

import pytest

import layers
from helpers import ROOT

FOUND = layers.read()
#: Function-local imports of our own modules still allowed (docs/architecture.md rule 9: the three optional
#: heavy parts, one import each): this number only goes down.
MAX_LOCAL = 3


def test_no_import_circles_counting_imports_inside_functions():
    assert layers.circles(FOUND.edges()) == []


def test_no_wing_imports_one_above_it_or_beside_it():
    assert ["%s:%d -> %s" % (i.source, i.line, i.target) for i in layers.upward(FOUND)] == []


def test_query_report_and_gates_import_no_harness():
    low = ("query", "report", "gates")
    assert [i for i in FOUND.imports if layers.wing(i.source) in low and layers.wing(i.target) == "harness"] == []


def test_no_part_imports_its_package_facade():
    assert ["%s:%d" % (i.source, i.line) for i in layers.facade_imports(FOUND)] == []


def test_at_most_three_modules_loose_at_the_top():
    loose = sorted(m for m, p in FOUND.modules.items() if m.count(".") == 1 and p.name != "__init__.py")
    assert len(loose) <= 3, loose


def test_every_module_belongs_to_a_wing():
    assert sorted({layers.wing(m) for m in FOUND.modules} - set(layers.RANK) - {"", "api"}) == []


def test_function_local_imports_of_our_modules_only_go_down():
    local = sorted({(i.source, i.line) for i in FOUND.imports if i.local})
    assert len(local) <= MAX_LOCAL, "%d function-local imports (at most %d): %s" % (len(local), MAX_LOCAL, local)


def test_the_map_sees_what_it_checks():
    """The checks can fail: a circle, an upward and a local import in a made-up package are all found."""
    edges = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert layers.circles(edges) == [["a", "b"]]
    up = layers.ImportMap({"laya_cases.core.x": ROOT, "laya_cases.store.y": ROOT},
                          [layers.Import("laya_cases.core.x", "laya_cases.store.y", 1, True)])
    assert len(layers.upward(up)) == 1


def test_every_package_is_in_the_wheel():
    """pyproject lists packages by hand (the CLI, sql/ and data/ live outside laya_cases/): none missing."""
    listed = set(re.findall(r'"(laya_cases[a-z_.]*)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    packages = {m for m, p in FOUND.modules.items() if p.name == "__init__.py"}
    assert packages - listed == set()


@pytest.mark.parametrize("path", sorted((ROOT / "laya_cases").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_relative_imports(path):
    """Absolute imports only: an import names the wing it comes from."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level] == []


def test_no_wing_takes_another_wings_private_names():
    """Rule 6: a harness uses `run`'s public API (run.job.Job and its hooks), not its underscored helpers."""
    assert ["%s:%d -> %s %s" % (i.source, i.line, i.target, i.names) for i in layers.private_imports(FOUND)] == []


def test_no_benchmark_imports_another():
    assert ["%s:%d -> %s" % (i.source, i.line, i.target) for i in layers.cross_harness(FOUND)] == []


def test_the_private_and_benchmark_checks_see_what_they_look_for():
    found = layers.ImportMap({m: ROOT for m in ("laya_cases.harness.robustness.execute", "laya_cases.run.inference",
                                                "laya_cases.harness.massive.harness", "laya_cases.run.job")})
    found.imports = [
        layers.Import("laya_cases.harness.robustness.execute", "laya_cases.run.inference", 1, False, ("_Calls", "chunks")),
        layers.Import("laya_cases.harness.robustness.execute", "laya_cases.run.job", 2, False, ("Job", "__all__")),
        layers.Import("laya_cases.harness.massive.harness", "laya_cases.harness.robustness.execute", 3, False, ("x",)),
    ]
    assert [i.line for i in layers.private_imports(found)] == [1]
    assert [i.line for i in layers.cross_harness(found)] == [3]
