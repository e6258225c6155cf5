"""The relevance benchmark's numbers: sql/relevance/ over the selected runs, and the four S8.9 CSVs.

`prepare(con, run_ids)` materialises, in order, rel_runs and rel_items (the runs and their items) and
then `build(con)` every table the CSVs read: rel_metrics (S8.4), rel_sweep (S8.6), rel_auc (S8.7),
rel_sweep_macro and rel_best (S8.8), rel_mcnemar and rel_intervals (S8.9). Each CSV is one
`COPY (<sql/relevance/<name>.sql>) TO ...`. Tests feed synthetic rel_runs/rel_items to `build`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from laya_cases.core.errors import UsageError, shorten
from laya_cases.query import sql as S
from laya_cases.query.resample import quantile_levels, replicate_weights
from laya_cases.store.warehouse import Warehouse
from laya_cases.store.layout import is_run_id

REPLICATES = 2000
SEED = 0
LEVEL = 0.95
CSVS = ("leaderboard", "aggregates", "threshold_sweep", "scoring_summary")
PICK_METRICS = ("f1", "matthews_corrcoef", "balanced_accuracy", "precision", "recall", "accuracy")


def connect(wh: Warehouse, run_ids: Optional[Sequence[str]] = None, sweep_only: bool = False):
    """A warehouse connection with the relevance tables over the named runs (all relevance runs if none).
    `sweep_only`: rel_runs, rel_items and rel_sweep only, without the comparability checks (--pick-on)."""
    con = S.connect(wh, list(run_ids) if run_ids else None)
    con.execute(S.text("relevance/macros.sql"))
    every = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    prepare(con, list(run_ids) if run_ids else every, named=bool(run_ids), sweep_only=sweep_only)
    return con


def prepare(con, run_ids: List[str], named: bool = True, sweep_only: bool = False) -> None:
    S.materialize(con, "relevance/runs.sql", "rel_runs", {"run_ids": run_ids})
    found = {r[0] for r in con.execute("SELECT run_id FROM rel_runs").fetchall()}
    if named:
        other = [r for r in run_ids if r not in found]
        if other:
            raise UsageError("run %s is not a relevance run (made by `laya-cases relevance run`)" % shorten(other[0]))
    if not found:
        raise UsageError("no relevance runs in the warehouse; make some with `laya-cases relevance run`")
    S.materialize(con, "relevance/items.sql", "rel_items")
    if sweep_only:
        S.materialize(con, "relevance/sweep.sql", "rel_sweep")
        return
    _check_comparable(con)
    build(con)


def _check_comparable(con) -> None:
    """One run per (model, language); equal benchmark SHA-256 within a language (S8.10); no empty run."""
    dup = con.execute("SELECT model_id, language, string_agg(run_id, ', ' ORDER BY run_id) FROM rel_runs "
                      "GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT 1").fetchone()
    if dup:
        raise UsageError("model %s has several runs for language %s (%s): name the runs to compare"
                         % (shorten(repr(dup[0])), dup[1], shorten(dup[2], 200)))
    mixed = con.execute("SELECT language, string_agg(DISTINCT benchmark_sha256[:12], ', ') FROM rel_runs "
                        "GROUP BY language HAVING count(DISTINCT benchmark_sha256) > 1 ORDER BY 1 LIMIT 1").fetchone()
    if mixed:
        raise UsageError("language %s: the runs have different benchmark SHA-256s (%s) and are not comparable"
                         % mixed)
    empty = con.execute("SELECT run_id FROM rel_runs WHERE run_id NOT IN (SELECT run_id FROM rel_items) "
                        "ORDER BY 1 LIMIT 1").fetchone()
    if empty:
        raise UsageError("run %s has no relevance items (S8.4: an empty run is an error)" % empty[0])


def register_weights(con, sizes: Sequence[int], replicates: int = REPLICATES, seed: int = SEED) -> None:
    """rel_weights (n, replicate, position, mult) for every run size n: the S9.5 CPython index stream."""
    import pyarrow as pa

    parts = []
    for n in sorted(set(int(x) for x in sizes)):
        rep, pos, mult = replicate_weights(seed, n, replicates)
        parts.append(pa.table({"n": np.full(len(rep), n, dtype=np.int64), "replicate": rep,
                               "position": pos, "mult": mult}))
    table = pa.concat_tables(parts) if parts else pa.table({"n": [], "replicate": [], "position": [], "mult": []})
    con.register("rel_weights_arrow", table)
    con.execute("CREATE OR REPLACE TEMP TABLE rel_weights AS SELECT * FROM rel_weights_arrow")
    con.unregister("rel_weights_arrow")


def intervals(con, values_sql: str, table: str) -> None:
    """boot_values from `values_sql`, then sql/bootstrap/intervals.sql into `table` (dim, metric, lower, upper)."""
    S.materialize(con, values_sql, "boot_values")
    lower, upper = quantile_levels(LEVEL)
    con.execute("CREATE OR REPLACE TEMP TABLE %s AS SELECT dim AS run_id, metric, B_used, lower, upper FROM (%s)"
                % (S.quote_ident(table), S.text("bootstrap/intervals.sql")), {"lower": lower, "upper": upper})


def build(con, replicates: int = REPLICATES) -> None:
    for name, table in (("run_metrics", "rel_metrics"), ("sweep", "rel_sweep"), ("roc_auc", "rel_auc"),
                        ("sweep_macro", "rel_sweep_macro"), ("best_points", "rel_best"),
                        ("mcnemar", "rel_mcnemar")):
        S.materialize(con, "relevance/%s.sql" % name, table)
    sizes = [r[0] for r in con.execute("SELECT DISTINCT n FROM rel_metrics").fetchall()]
    register_weights(con, sizes, replicates)
    intervals(con, "relevance/boot_values.sql", "rel_intervals")


def copy_csv(con, name: str, path: Path, params: Optional[Dict[str, Any]] = None) -> None:
    """One CSV: `COPY (sql/relevance/<name>.sql) TO path` (UTF-8, header, LF, empty cell for NULL)."""
    query = S.text("relevance/%s.sql" % name)
    for key, value in (params or {}).items():       # COPY takes no prepared parameters: literals, quoted
        query = query.replace("$%s" % key, "'%s'" % str(value).replace("'", "''"))
    target = str(path).replace("'", "''")
    con.execute("COPY (%s\n) TO '%s' (FORMAT csv, HEADER, DELIMITER ',', NEW_LINE '\\n')" % (query, target))


def export(wh: Warehouse, run_ids: Sequence[str], out: str, pick_on: Optional[str] = None,
           metric: str = "f1") -> List[str]:
    """Write the four S8.9 CSVs (and operating_points.csv with --pick-on) into `out`; returns the paths."""
    if metric not in PICK_METRICS:
        raise UsageError("--pick-metric must be one of %s, got %s" % (", ".join(PICK_METRICS), shorten(repr(metric))))
    con = connect(wh, run_ids)
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out %s cannot be created: %s" % (shorten(out), exc.strerror or exc)) from None
    written = []
    for name in CSVS:
        written.append(str(folder / ("%s.csv" % name)))
        copy_csv(con, name, Path(written[-1]))
    if pick_on is not None:
        selected = [r[0] for r in con.execute("SELECT run_id FROM rel_runs ORDER BY run_id").fetchall()]
        if pick_on not in selected and not pick_on.startswith("langs:"):    # a dev run outside the comparison
            if not is_run_id(pick_on) or not wh.has_run(pick_on):
                raise UsageError("--pick-on %s: no such run in %s (nor langs:<codes>)" % (shorten(pick_on), wh.root))
            con = connect(wh, selected + [pick_on], sweep_only=True)
        pick_table(con, pick_on)
        written.append(str(folder / "operating_points.csv"))
        copy_csv(con, "pick", Path(written[-1]), {"metric": metric})
    return written


def pick_table(con, pick_on: str) -> None:
    """rel_pick: RUN -> A = that run, B = every other scoring run; langs:xx,yy -> per model, A = its runs in
    those languages, B = its runs in the others."""
    scoring = con.execute("SELECT run_id, model_id, language FROM rel_runs WHERE mode = 'scoring' "
                          "ORDER BY run_id").fetchall()
    if pick_on.startswith("langs:"):
        langs = {x for x in pick_on[len("langs:"):].split(",") if x}
        rows = [(r, "A" if lang in langs else "B", model) for r, model, lang in scoring]
        if not langs or not any(role == "A" for _, role, _ in rows):
            raise UsageError("--pick-on %s: no selected scoring run is in those languages" % shorten(pick_on))
    else:
        if pick_on not in {r for r, _, _ in scoring}:
            raise UsageError("--pick-on %s: not a selected scoring run (nor langs:<codes>)" % shorten(pick_on))
        rows = [(r, "A" if r == pick_on else "B", "all") for r, _, _ in scoring]
    if not any(role == "B" for _, role, _ in rows):
        raise UsageError("--pick-on %s leaves no run to apply the threshold to" % shorten(pick_on))
    con.execute("CREATE OR REPLACE TEMP TABLE rel_pick (run_id VARCHAR, role VARCHAR, pick_group VARCHAR)")
    con.executemany("INSERT INTO rel_pick VALUES (?, ?, ?)", rows)
