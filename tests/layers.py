"""The import map of laya_cases/, read from the code (an AST pass over every import statement): which
module imports which, at module level or inside a function. tests/architecture/test_layers.py checks the rules of
docs/architecture.md against it; `python tests/layers.py` prints it."""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Set, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / "laya_cases"

#: Wings bottom-up: an import may point at its own wing or one listed before it. Wings that share a rank
#: are siblings and may not import each other.
WINGS: List[Tuple[str, ...]] = [("core",), ("interop",), ("store", "runners"), ("record", "query"), ("run",),
                                ("report",), ("gates",), ("harness",), ("imports",), ("views",), ("api",)]
RANK = {wing: rank for rank, names in enumerate(WINGS) for wing in names}


@dataclass
class Import:
    source: str            # the importing module, dotted
    target: str            # the imported module of laya_cases, dotted
    line: int
    local: bool            # inside a function
    names: Tuple[str, ...] = ()    # what `from target import ...` takes (empty for `import target`)


@dataclass
class ImportMap:
    modules: Dict[str, Path] = field(default_factory=dict)
    imports: List[Import] = field(default_factory=list)

    def edges(self, with_local: bool = True) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            if (with_local or not imp.local) and imp.target != imp.source:
                out[imp.source].add(imp.target)
        return out


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node: ast.AST, module: str, is_package: bool, known: Set[str]) -> List[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module.split(".")[:len(module.split(".")) - (0 if is_package else 1)]
        prefix = ".".join(base[:len(base) - node.level + 1]) if node.level else ""
        target = ".".join(p for p in (prefix, node.module or "") if p)
        names = [target + "." + a.name if target + "." + a.name in known else target for a in node.names]
    out = []
    for name in names:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in known:
            out.append(name)
    return sorted(set(out))


def read(package: Path = PACKAGE) -> ImportMap:
    found = ImportMap({_name(p): p for p in sorted(package.rglob("*.py"))})
    known = set(found.modules)
    for module, path in found.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = tuple(a.name for a in node.names) if isinstance(node, ast.ImportFrom) else ()
                for target in _targets(node, module, path.name == "__init__.py", known):
                    found.imports.append(Import(module, target, node.lineno, id(node) in inner, names))
    return found


def circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return sorted(out)


def wing(module: str) -> str:
    """laya_cases.store.write -> store; laya_cases.api -> api; laya_cases (the facade) -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward(found: ImportMap) -> List[Import]:
    """Imports that point at a higher wing or a sibling wing (the facade laya_cases/__init__ is above all)."""
    out = []
    for imp in found.imports:
        a, b = wing(imp.source), wing(imp.target)
        if not a or a == b:
            continue
        if not b or RANK.get(b, 99) >= RANK.get(a, 99):
            out.append(imp)
    return out


def facade_imports(found: ImportMap) -> List[Import]:
    """A package's parts importing the package's own __init__ (rule 3)."""
    packages = {m for m, p in found.modules.items() if p.name == "__init__.py"}
    return [imp for imp in found.imports
            if imp.target in packages and imp.source != imp.target and imp.source.startswith(imp.target + ".")]


def private_imports(found: ImportMap) -> List[Import]:
    """Private names (`_x`) taken from another wing: a wing asks another only through its public names
    (rule 6: a harness uses `run`'s public API)."""
    return [imp for imp in found.imports if wing(imp.source) != wing(imp.target)
            and any(n.startswith("_") and not n.startswith("__") for n in imp.names)]


def harness_of(module: str) -> str:
    """laya_cases.harness.robustness.execute -> robustness; '' outside a benchmark's own package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "harness" else ""


def cross_harness(found: ImportMap) -> List[Import]:
    """A benchmark importing another benchmark (rule 6)."""
    return [imp for imp in found.imports if harness_of(imp.source) and harness_of(imp.target)
            and harness_of(imp.source) != harness_of(imp.target)]


if __name__ == "__main__":
    found = read()
    local = [i for i in found.imports if i.local]
    print("modules %d, loose at the top %d" % (len(found.modules), sum(
        1 for m, p in found.modules.items() if m.count(".") == 1 and p.name != "__init__.py")))
    print("circles:", *circles(found.edges()), sep="\n  ")
    print("function-local imports of our own modules: %d" % len({(i.source, i.line) for i in local}))
    if "-v" in sys.argv:
        for i in local:
            print("  %s:%d -> %s" % (i.source, i.line, i.target))
    print("imports pointing up or sideways:", *("%s:%d -> %s" % (i.source, i.line, i.target)
                                             for i in upward(found)), sep="\n  ")
    print("facade imports:", *("%s:%d -> %s" % (i.source, i.line, i.target)
                               for i in facade_imports(found)), sep="\n  ")
    print("private names from another wing:", *("%s:%d -> %s %s" % (i.source, i.line, i.target, i.names)
                                                for i in private_imports(found)), sep="\n  ")
    print("a benchmark importing another:", *("%s:%d -> %s" % (i.source, i.line, i.target)
                                            for i in cross_harness(found)), sep="\n  ")
