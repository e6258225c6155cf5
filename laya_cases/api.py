"""The Python API for notebooks: `lc.open(path)` and what a Store gives (docs/python.md).

Tables come back as polars frames, reports and diffs as the same dicts the CLI writes as JSON, plots as
matplotlib figures. Every failure the CLI prints on one line is a UsageError here (an unknown run names
the known ones). Runs, reports, diffs, plots and SQL are read in laya_cases/views/notebook.py, imported
on a Store's first query (`_reads`, the one late import here), so `import laya_cases` and `lc.open`
load no engine; cases() reads with polars alone.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

from laya_cases.core.errors import UsageError
from laya_cases.interop.convert import require_package
from laya_cases.store import schema
from laya_cases.store.delta.url import check_warehouse
from laya_cases.store.layout import resolve_root
from laya_cases.store.warehouse import Warehouse

PathLike = Union[str, Path]


def open(path: Optional[PathLike] = None) -> "Store":      # noqa: A001 -- lc.open() reads as it should
    """The warehouse at `path` (else $LAYA_CASES_WAREHOUSE, else ./warehouse). A missing directory is
    an empty warehouse (a run committed later appears); a path that is a file is a UsageError."""
    if path is not None or os.environ.get("LAYA_CASES_WAREHOUSE"):
        check_warehouse(str(path) if path is not None else os.environ["LAYA_CASES_WAREHOUSE"])
    root = resolve_root(None if path is None else str(path))
    if root.exists() and not root.is_dir():
        raise UsageError("warehouse %s is not a directory" % root)
    return Store(root)


def _reads():
    """views/notebook.py, where a Store queries (duckdb, the report builder, the diff's blocks): imported on
    the first query, so that `import laya_cases`, `lc.Store` and `lc.open` load no engine."""
    from laya_cases.views import notebook

    return notebook


class Store:
    """A warehouse, read-only: runs, cases, reports, diffs and plots of its committed runs."""

    def __init__(self, root: PathLike):
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
        return _reads().runs(self.warehouse)

    def cases(self, run: str, lazy: bool = False):
        """The run's cases (records with a question and no error) as a polars DataFrame, or a LazyFrame
        to filter and aggregate before anything is read. Columns: docs/schema.md, plus run_id."""
        frame = self.warehouse.case_frame(run)
        return frame if lazy else frame.collect()

    def report(self, run: str, slices: Optional[Sequence[str]] = None, bootstrap: int = 0, seed: int = 0,
               score_within: Sequence[float] = (), coverages: Sequence[float] = (),
               thresholds: Sequence[float] = ()) -> Dict[str, Any]:
        """The run's report as a dict: the JSON of `laya-cases report --json` without the case list (use
        cases() for those). `slices` keeps only the named dimensions (language, model, qid, tag);
        `bootstrap` > 0 adds percentile intervals (S9.5)."""
        return _reads().report(self.warehouse, run, slices, bootstrap, seed, score_within, coverages, thresholds)

    def diff(self, a: str, b: str, by: Optional[str] = None, bootstrap: int = 2000, seed: int = 0) -> Dict[str, Any]:
        """Run b against run a, case by case: the dict of `laya-cases diff --json` (flips, McNemar p,
        accuracy delta with a paired bootstrap interval; `by` adds one dimension's groups)."""
        return _reads().diff(self.warehouse, a, b, by, bootstrap, seed)

    def plot(self, run: str, by: Optional[str] = None) -> Dict[str, Any]:
        """{"reliability": Figure, "risk_coverage": Figure}: the pictures of `laya-cases plot`, as
        matplotlib figures (overall, or one line per group of `by`)."""
        return _reads().plot(self.warehouse, run, by)

    def to_hf(self, run: str):
        """The run's cases as a `datasets.Dataset` (warehouse Arrow types, plus run_id), to save or share:
        `.save_to_disk(folder)`, `.push_to_hub(name)` (docs/datasets.md)."""
        return run_to_hf(self, run)

    def sql(self, query: str):
        """A read-only query over the views of `laya-cases sql` (cases, decisions, errors, runs,
        slice_sets) as a polars DataFrame."""
        return _reads().sql(self.warehouse, query)


# ---------------------------------------------------------------------------------------------- out
def run_to_hf(store: Any, run: str):
    """A run's cases (the rows of `Store.cases(run)`) as a `datasets.Dataset`, columns in the warehouse's
    Arrow types (docs/schema.md) plus `run_id`. `store` is a `laya_cases.Store` or a warehouse path.
    Share it with `.save_to_disk(folder)` or `.push_to_hub(name)`."""
    import pyarrow as pa

    datasets = require_package("datasets")
    if not hasattr(store, "cases"):
        store = open(store)
    table = store.cases(run).to_arrow()
    decision = schema.DECISION_SCHEMA                # made on first use (pyarrow)
    fields = [decision.field(n) if n in decision.names else pa.field(n, pa.string() if n == "run_id"
              else _plain(table.schema.field(n).type)) for n in table.column_names]
    table = table.cast(pa.schema(fields))
    info = datasets.DatasetInfo(description="laya-cases run %s: its cases (%s, docs/schema.md)"
                                % (run, schema.SCHEMA_VERSION))
    return datasets.Dataset(datasets.table.InMemoryTable(table), info=info)


def _plain(kind: Any) -> Any:
    """polars' large/view Arrow types as the plain ones the warehouse writes."""
    import pyarrow as pa

    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_large_list(kind) or pa.types.is_list_view(kind):
        return pa.list_(_plain(kind.value_type))
    return kind
