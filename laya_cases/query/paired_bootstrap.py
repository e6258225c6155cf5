"""A paired bootstrap whose replicate adds up its drawn units' counts: `diff`'s rows, a gate policy's cases.

Units whose counts are equal everywhere are interchangeable in those sums, so a SQL file puts them in
classes (sql/compare/diff_unit_classes.sql, sql/gates/policy_case_classes.sql), the S9.5 stream is
counted per class (resample.class_counts: no replicate's draws are kept) and each batch of counts goes
to the replicates' SQL file as the table `boot_class_counts(replicate, class, m)`. The sums are the same
integers as joining every drawn unit, so the values are the same bits; memory stays flat in B.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa

from laya_cases.query import sql as sqlfiles
from laya_cases.query.resample import class_counts

#: Rows of boot_class_counts per query: the batch and its join stay ~100 MB at any B.
BATCH_ROWS = 1 << 22


def unit_classes(con, table: str, n: int) -> Tuple[np.ndarray, int]:
    """Each unit's class from `table` (unit, class), by unit, and how many classes; a unit without a row
    (in no group) gets a class of its own, which no replicate's sums read."""
    classes = np.full(n, -1, dtype=np.int64)
    result = con.execute("SELECT unit, class FROM %s" % table)
    if hasattr(result, "fetch_arrow_table"):            # DuckDB: columns, not a million Python tuples
        found = result.fetch_arrow_table()
        classes[found["unit"].to_numpy()] = found["class"].to_numpy()
    else:
        for unit, cls in result.fetchall():
            classes[unit] = cls
    n_classes = int(classes.max()) + 1 if n else 0
    unclassed = classes < 0
    classes[unclassed] = n_classes
    return classes, n_classes + 1 if unclassed.any() else n_classes


def replicate_values(con, seed: int, n: int, bootstrap: int, classes_table: str, sql_file: str,
                     progress: Optional[Callable[[int], None]] = None) -> pa.Table:
    """The (dim, key, metric, value) rows `sql_file` gives for every replicate, batch by batch;
    `progress(replicates counted)` after each batch of the stream."""
    columns: Dict[str, List[Any]] = {"dim": [], "key": [], "metric": [], "value": []}
    classes, n_classes = unit_classes(con, classes_table, n)

    def run(batch: List[Tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        con.register("boot_class_counts", pa.table({
            name: pa.array(np.concatenate([np.empty(0, np.int64)] + [b[i] for b in batch]), type=pa.int64())
            for i, name in enumerate(("replicate", "class", "m"))}))
        for r in sqlfiles.rows(sqlfiles.query(con, sql_file)):
            for name, values in columns.items():
                values.append(r[name])
        con.unregister("boot_class_counts")

    batch: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rows = 0
    for first, last, counts in class_counts(seed, n, bootstrap, classes, n_classes):
        if progress is not None:
            progress(last)
        replicate, cls = np.nonzero(counts)
        batch.append((replicate + first, cls, counts[replicate, cls]))
        rows += len(cls)
        if rows >= BATCH_ROWS:
            run(batch)
            batch, rows = [], 0
    run(batch)                                # the rest (none at all: the file's empty answer)
    return values_table(columns)


def values_table(columns: Optional[Dict[str, List[Any]]] = None) -> pa.Table:
    """The (dim, key, metric, value) replicate rows as a table; none without `columns` (no interval drawn)."""
    columns = columns or {"dim": [], "key": [], "metric": [], "value": []}
    return pa.table({"dim": pa.array(columns["dim"], pa.string()), "key": pa.array(columns["key"], pa.string()),
                     "metric": pa.array(columns["metric"], pa.string()),
                     "value": pa.array(columns["value"], pa.float64())})
