"""A report as a command asks for it: the report flags (shared by `report` and `run`) checked once,
and the warnings that go beside a document (S3.7; session.py builds it)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.query import engines
from laya_cases.report import build as R

VIEWS = ("text", "table")


@dataclass(frozen=True)
class ReportRequest:
    """The report flags as given; `options()` checks them (UsageError) and gives report.Options."""
    slices: Sequence[str] = ()
    json_out: Optional[Path] = None
    markdown_out: Optional[Path] = None
    score_within: Sequence[float] = ()
    coverages: Sequence[float] = ()
    thresholds: Sequence[float] = ()
    bootstrap: int = 0
    seed: int = 0
    view: str = "text"
    no_cases: bool = False                   # --no-cases: the JSON's `cases` list left empty
    json_strict: bool = False                # --json-strict: null for NaN/Infinity (the default: the reference's)
    html_out: Optional[Path] = None          # --html FILE: the self-contained HTML report (laya_cases/html)
    engine: str = "duckdb"                   # --engine: duckdb or spark (laya_cases/engines, docs/scale.md)
    spark_master: Optional[str] = None       # --spark-master URL
    relabels: bool = False                   # --relabels: the store's relabels read as the labels (report/audit.py)

    @property
    def json_to_stdout(self) -> bool:
        """`--json -`: the JSON goes to stdout and the text report is not printed."""
        return self.json_out is not None and str(self.json_out) == "-"

    def options(self) -> R.Options:
        for dim in self.slices:
            if dim not in R.DIMENSIONS:
                raise UsageError("--slice must be one of %s, got %r" % (", ".join(R.DIMENSIONS), dim))
        options = R.Options(score_within=[R.check_tolerance(t) for t in self.score_within],
                            coverages=[R.check_coverage(c) for c in self.coverages],
                            thresholds=[R.check_threshold(t) for t in self.thresholds],
                            include_cases=True, bootstrap=R.check_bootstrap(self.bootstrap), seed=self.seed,
                            engine=engines.check_engine(self.engine), spark_master=self.spark_master)
        if self.view not in VIEWS:
            raise UsageError("--view must be text or table, got %r" % self.view)
        return options


def score_within_warnings(con, run_id: str, doc: Dict[str, Any], options: R.Options) -> List[str]:
    """S3.7: one line per requested score_within_<tol> without a value, saying how many answered
    cases are score answers."""
    missing = [R.score_within_key(t) for t in options.score_within if R.score_within_key(t) not in doc["overall"]]
    if not missing:
        return []
    counts = R.answer_type_counts(con, run_id)
    return ["%s has no value: %d of %d answered case(s) are score answers, and the metric needs one whose label "
            "is a number. A threshold naming it reports it missing." % (key, counts["n_score"], counts["n_cases"])
            for key in missing]
