"""The Python API for notebooks: `lc.open(path)` and what a Store gives (docs/python.md).

Tables come back as polars frames, reports and diffs as the same dicts the CLI writes as JSON, plots as
matplotlib figures. Every failure the CLI prints on one line is a UsageError here (an unknown run names
the known ones). duckdb, polars and matplotlib are imported when first used, so `import laya_cases`
stays light.
"""
from __future__ import annotations

import os

import warnings
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

from laya_cases.core.errors import UsageError

PathLike = Union[str, Path]


def open(path: Optional[PathLike] = None) -> "Store":      # noqa: A001 -- lc.open() reads as it should
    """The warehouse at `path` (else $LAYA_CASES_WAREHOUSE, else ./warehouse). A missing directory is
    an empty warehouse (a run committed later appears); a path that is a file is a UsageError."""
    from laya_cases.store.delta.url import check_warehouse
    from laya_cases.store.layout import resolve_root

    if path is not None or os.environ.get("LAYA_CASES_WAREHOUSE"):
        check_warehouse(str(path) if path is not None else os.environ["LAYA_CASES_WAREHOUSE"])
    root = resolve_root(None if path is None else str(path))
    if root.exists() and not root.is_dir():
        raise UsageError("warehouse %s is not a directory" % root)
    return Store(root)


class Store:
    """A warehouse, read-only: runs, cases, reports, diffs and plots of its committed runs."""

    def __init__(self, root: PathLike):
        from laya_cases.store.warehouse import Warehouse

        self.warehouse = Warehouse(Path(root))

    @property
    def root(self) -> Path:
        return self.warehouse.root

    def __repr__(self) -> str:
        return "laya_cases.Store(%r)" % str(self.root)

    def run_ids(self):
        """The committed run ids, sorted."""
        return self.warehouse.run_ids()

    def runs(self):
        """The runs table as a polars DataFrame, oldest first (damaged runs left out, with a warning)."""
        return _frame(self._connect(), "SELECT * FROM runs ORDER BY created_at, run_id")

    def cases(self, run: str, lazy: bool = False):
        """The run's cases (records with a question and no error) as a polars DataFrame, or a LazyFrame
        to filter and aggregate before anything is read. Columns: docs/schema.md, plus run_id."""
        import polars as pl

        self.warehouse.require_run(run)
        files = [str(p) for p in self.warehouse.case_files(run)]
        frame = (pl.scan_parquet(files, hive_partitioning=False, missing_columns="insert", extra_columns="ignore")
                 .filter(pl.col("error").is_null() & pl.col("qid").is_not_null())
                 .with_columns(run_id=pl.lit(run, dtype=pl.String)))
        return frame if lazy else frame.collect()

    def report(self, run: str, slices: Optional[Sequence[str]] = None, bootstrap: int = 0, seed: int = 0,
               score_within: Sequence[float] = (), coverages: Sequence[float] = (),
               thresholds: Sequence[float] = ()) -> Dict[str, Any]:
        """The run's report as a dict: the JSON of `laya-cases report --json` without the case list (use
        cases() for those). `slices` keeps only the named dimensions (language, model, qid, tag);
        `bootstrap` > 0 adds percentile intervals (S9.5)."""
        from laya_cases.report import build as R

        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UsageError("seed must be a non-negative integer, got %r" % (seed,))
        dims = list(R.DIMENSIONS if slices is None else ([slices] if isinstance(slices, str) else slices))
        for dim in dims:
            if dim not in R.DIMENSIONS:
                raise UsageError("slices must name %s, got %r" % (", ".join(R.DIMENSIONS), dim))
        options = R.Options(score_within=[R.check_tolerance(t) for t in score_within],
                            coverages=[R.check_coverage(c) for c in coverages],
                            thresholds=[R.check_threshold(t) for t in thresholds], include_cases=False,
                            bootstrap=R.check_bootstrap(bootstrap), seed=seed)
        doc = self._build(run, options)
        doc.pop("cases", None)
        for part in (doc["slices"], doc["extensions"]["slices"]):
            for dim in [d for d in part if d not in dims]:
                del part[dim]
        return doc

    def diff(self, a: str, b: str, by: Optional[str] = None, bootstrap: int = 2000, seed: int = 0) -> Dict[str, Any]:
        """Run b against run a, case by case: the dict of `laya-cases diff --json` (flips, McNemar p,
        accuracy delta with a paired bootstrap interval; `by` adds one dimension's groups)."""
        from laya_cases.harness.diff_blocks import DIFF_BLOCKS
        from laya_cases.report.diff import diff

        return self._guard(lambda: diff(self.warehouse, a, b, by=by, bootstrap=bootstrap, seed=seed,
                                                     blocks=DIFF_BLOCKS), a, b)

    def plot(self, run: str, by: Optional[str] = None) -> Dict[str, Any]:
        """{"reliability": Figure, "risk_coverage": Figure}: the pictures of `laya-cases plot`, as
        matplotlib figures (overall, or one line per group of `by`)."""
        from laya_cases.report import build as R
        from laya_cases.views.plots import report_figures

        if by is not None and by not in R.DIMENSIONS:
            raise UsageError("by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
        return report_figures(self._build(run, R.Options(include_cases=False)), by)

    def to_hf(self, run: str):
        """The run's cases as a `datasets.Dataset` (warehouse Arrow types, plus run_id), to save or share:
        `.save_to_disk(folder)`, `.push_to_hub(name)` (docs/datasets.md)."""
        return run_to_hf(self, run)

    def sql(self, query: str):
        """A read-only query over the views of `laya-cases sql` (cases, decisions, errors, runs,
        slice_sets) as a polars DataFrame."""
        from laya_cases.query.guard import check_query

        text = check_query(query, self.root)          # the read, wrapped so that nothing else can run
        con = self._connect()
        return self._guard(lambda: _frame(con, text))

    # ------------------------------------------------------------------ helpers
    def _connect(self):
        from laya_cases.query.sql import connect

        wh = self.warehouse
        wh.damaged.clear()
        con = connect(wh)
        for rid, problem in sorted(wh.damaged.items()):
            warnings.warn("run %r is damaged and left out: %s" % (rid, problem), stacklevel=3)
        return con

    def _build(self, run: str, options) -> Dict[str, Any]:
        from laya_cases.query.sql import connect
        from laya_cases.report import build as R

        self.warehouse.require_run(run)
        return self._guard(lambda: R.build(connect(self.warehouse, [run]), run, options), run)

    @staticmethod
    def _guard(call, *runs: str):
        """duckdb errors (a page that does not decode, a bad query) as one-line UsageErrors."""
        import duckdb

        try:
            return call()
        except duckdb.Error as exc:
            what = "cannot read run %s" % " / ".join(repr(r) for r in runs) if runs else "query failed"
            raise UsageError("%s: %s" % (what, str(exc).splitlines()[0])) from None


def _frame(con, query: str):
    import polars as pl

    return pl.from_arrow(con.sql(query).to_arrow_table())


# ---------------------------------------------------------------------------------------------- out
def run_to_hf(store: Any, run: str):
    """A run's cases (the rows of `Store.cases(run)`) as a `datasets.Dataset`, columns in the warehouse's
    Arrow types (docs/schema.md) plus `run_id`. `store` is a `laya_cases.Store` or a warehouse path.
    Share it with `.save_to_disk(folder)` or `.push_to_hub(name)`."""
    import pyarrow as pa

    from laya_cases.interop.convert import require_package
    from laya_cases.store.schema import DECISION_SCHEMA, SCHEMA_VERSION

    datasets = require_package("datasets")
    if not hasattr(store, "cases"):
        store = open(store)
    table = store.cases(run).to_arrow()
    fields = [DECISION_SCHEMA.field(n) if n in DECISION_SCHEMA.names else pa.field(n, pa.string() if n == "run_id"
              else _plain(table.schema.field(n).type)) for n in table.column_names]
    table = table.cast(pa.schema(fields))
    info = datasets.DatasetInfo(description="laya-cases run %s: its cases (%s, docs/schema.md)"
                                % (run, SCHEMA_VERSION))
    return datasets.Dataset(datasets.table.InMemoryTable(table), info=info)


def _plain(kind: Any) -> Any:
    """polars' large/view Arrow types as the plain ones the warehouse writes."""
    import pyarrow as pa

    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_large_list(kind) or pa.types.is_list_view(kind):
        return pa.list_(_plain(kind.value_type))
    return kind
