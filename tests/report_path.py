"""The real report path for exactness tests: answers rows -> JSONL -> ingest -> report.build.

Shared by test_spec_examples, test_differential and test_determinism; plus the float comparisons
the spec asks for (S0.1: 1e-9 in general, bit-identical for evaluator means, NaN equal to NaN).
"""
from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any, Dict, List, Sequence

from helpers import write_jsonl
from laya_cases.query import catalogue
from laya_cases.report import build as R
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
from laya_cases.query.sql import connect



def is_evaluator(name: str) -> bool:
    """Metrics the reference computes as fsum / n (`-- kind: evaluator`): ours must be bit-identical
    (S0.1, S3.3)."""
    found = catalogue.find(name)
    return found is not None and found.kind == "evaluator"


class Store:
    """One tmp warehouse; each answer set becomes its own committed run."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.wh = Warehouse(self.root / "warehouse")
        self._n = 0

    def ingest(self, rows: List[Dict[str, Any]], run_id: str | None = None, **kwargs) -> str:
        self._n += 1
        run_id = run_id or "run%04d" % self._n
        path = write_jsonl(self.root / ("%s.answers.jsonl" % run_id), rows)
        return ingest(self.wh, str(path), run_id=run_id, **kwargs).run_id

    def build(self, run_id: str, score_within: Sequence[float] = (), coverages: Sequence[float] = (),
              include_cases: bool = True) -> Dict[str, Any]:
        options = R.Options(score_within=list(score_within), coverages=list(coverages),
                            include_cases=include_cases)
        return R.build(connect(self.wh, [run_id]), run_id, options)

    def report(self, rows: List[Dict[str, Any]], **kwargs) -> Dict[str, Any]:
        return self.build(self.ingest(rows), **kwargs)


def same_bits(a: Any, b: Any) -> bool:
    """Bit-identical floats (both NaN counts as identical; 0.0 and -0.0 differ)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return struct.pack("<d", a) == struct.pack("<d", b)
    return type(a) is type(b) and a == b


def close(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """S0.1 parity: absolute 1e-9; NaN == NaN; an infinity only equals itself."""
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tol


def metric_diffs(ours: Dict[str, float], ref: Dict[str, float], where: str) -> List[str]:
    """Every disagreement between two metric maps: key sets, 1e-9, evaluator bits."""
    problems = []
    if set(ours) != set(ref):
        problems.append("%s: keys differ, ours-only %s, reference-only %s"
                        % (where, sorted(set(ours) - set(ref)), sorted(set(ref) - set(ours))))
    for name in sorted(set(ours) & set(ref)):
        a, b = ours[name], ref[name]
        if is_evaluator(name):
            if not same_bits(float(a), float(b)):
                problems.append("%s.%s: %r is not bit-identical to the reference %r" % (where, name, a, b))
        elif not close(a, b):
            problems.append("%s.%s: %r vs reference %r" % (where, name, a, b))
    return problems


def report_diffs(ours: Dict[str, Any], ref_overall: Dict[str, float],
                 ref_slices: Dict[str, Dict[str, Dict[str, float]]]) -> List[str]:
    """Compare `overall` and every slice group of our report to the reference's."""
    problems = metric_diffs(ours["overall"], ref_overall, "overall")
    if set(ours["slices"]) != set(ref_slices):
        problems.append("slice dimensions differ: %s vs %s" % (sorted(ours["slices"]), sorted(ref_slices)))
    for dim in sorted(set(ours["slices"]) & set(ref_slices)):
        mine, theirs = ours["slices"][dim], ref_slices[dim]
        if set(mine) != set(theirs):
            problems.append("slices.%s groups differ: %s vs %s" % (dim, sorted(mine), sorted(theirs)))
        for key in sorted(set(mine) & set(theirs)):
            problems += metric_diffs(mine[key], theirs[key], "slices.%s[%r]" % (dim, key))
    return problems
