"""`laya-cases rank RUN RUN ...`: runs of one dataset ranked per metric, overall and per group of a
dimension, with a paired bootstrap interval for each value and each rank, and tie groups.

Every run is resampled over the same rows with the same seed (S9.5: replicate b of every run draws
the same dataset rows, the union of the rows the runs have cases on), so the replicate values pair:
replicate b ranks the runs (sql/compare/rank_replicates.sql, the leaderboard's rank rule) and takes
every pair's difference; bootstrap/intervals.sql turns those into percentile intervals. Runs are
ordered by their point value (sql/compare/rank_points.sql; ties in the order they were named). Tie
groups follow the relevance leaderboard: the first run opens group 1, each next run joins the current
group when its difference to the group's first run is not significant (the interval of the
difference holds 0), else it opens the next group. The metrics ranked are those with a bootstrap
interval (`-- interval: yes`: the accuracies and selective accuracies), all higher-is-better.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import sql as S
from laya_cases.query.resample import quantile_levels
from laya_cases.report import build as R
from laya_cases.report import runset

MAX_RUNS = runset.MAX_RUNS


def groups(order: Sequence[str], significant: Callable[[str, str], bool]) -> Dict[str, int]:
    """Tie group of each item in `order` (best first): `significant(a, b)` says whether a and b differ."""
    out: Dict[str, int] = {}
    group, leader = 0, None
    for item in order:
        if leader is None or significant(leader, item):
            group, leader = group + 1, item
        out[item] = group
    return out


def _check(wh, run_ids: Sequence[str], by: Optional[str], bootstrap: int) -> None:
    runset.named(run_ids, "rank", MAX_RUNS)
    if by is not None and by not in R.DIMENSIONS:
        raise UsageError("--by must be one of %s, got %r" % (", ".join(R.DIMENSIONS), by))
    if R.check_bootstrap(bootstrap) == 0:
        raise UsageError("--bootstrap must be a number of replicates in [100, 100000]: ranks need intervals")
    runset.same_dataset(wh, run_ids, "rank")


def rank(wh, run_ids: Sequence[str], *, by: Optional[str] = None, bootstrap: int = 1000, seed: int = 0,
         level: float = 0.95, progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, Any]:
    """The rank document: {"runs", "bootstrap", "seed", "level", "by", "metrics": {metric: {"overall":
    rows, "<by>": {key: rows}}}}, each row {position, run_id, value, n, ci, rank, rank_ci, group, tied_with}."""
    import pyarrow as pa

    run_ids = list(run_ids)
    _check(wh, run_ids, by, bootstrap)
    options = R.Options(bootstrap=bootstrap, seed=seed, level=level, include_cases=False)
    points, replicates, per_run = [], [], []
    for rid in run_ids:
        con = S.connect(wh, [rid])
        metrics = R.compute(con, rid, options)
        per_run.append((con, metrics))
    rows = sorted(set().union(*[{r[0] for r in S.query(con, "bootstrap/rows.sql", {"run_id": rid}).fetchall()}
                                for rid, (con, _) in zip(run_ids, per_run)]))
    names = [name for name, _, _ in R.ratio_metrics(options)]
    for i, (rid, (con, metrics)) in enumerate(zip(run_ids, per_run), 1):
        for (dim, key), values in metrics.values.items():
            if dim == "overall" or dim == by:
                for name in names:
                    if name in values:
                        n = metrics.counts[(dim, key)][name].get("n")
                        points.append({"run_index": i, "run_id": rid, "dim": dim, "key": key, "metric": name,
                                       "value": values[name], "n": n})
        table = R.replicate_values(con, rid, options, rows=rows, numbered=True)
        con.close()
        if table is not None:
            replicates.append(table.append_column("run_index", pa.array([i] * table.num_rows, pa.int32())))
        if progress is not None:
            progress(i, len(run_ids))
    return _document(run_ids, points, replicates, options, by)


def _document(run_ids: List[str], points: List[Dict[str, Any]], replicates: List[Any], options: R.Options,
              by: Optional[str]) -> Dict[str, Any]:
    import pyarrow as pa

    con = duckdb.connect()
    S.prepare_connection(con, functions=False)
    keep = ["overall"] + ([by] if by else [])
    values = (pa.concat_tables([t.select(["run_index", "dim", "key", "metric", "replicate", "value"])
                                for t in replicates]) if replicates else None)
    con.register("rank_values", values if values is not None else pa.table(
        {"run_index": pa.array([], pa.int32()), "dim": pa.array([], pa.string()), "key": pa.array([], pa.string()),
         "metric": pa.array([], pa.string()), "replicate": pa.array([], pa.int32()), "value": pa.array([], pa.float64())}))
    con.execute("CREATE TEMP TABLE boot_values AS SELECT * FROM (%s) WHERE split_part(dim, '@', 1) IN %s"
                % (S.text("compare/rank_replicates.sql"), _sql_list(keep)))
    lower, upper = quantile_levels(options.level)
    ci = {(r["dim"], r["key"], r["metric"]): (r["lower"], r["upper"])
          for r in S.rows(S.query(con, "bootstrap/intervals.sql", {"lower": lower, "upper": upper}))}
    con.register("rank_points_in", pa.Table.from_pylist(points, schema=pa.schema(
        [("run_index", pa.int32()), ("run_id", pa.string()), ("dim", pa.string()), ("key", pa.string()),
         ("metric", pa.string()), ("value", pa.float64()), ("n", pa.int64())])))
    ranked = S.rows(S.query(con, "compare/rank_points.sql"))
    con.close()
    out: Dict[str, Any] = {"runs": run_ids, "bootstrap": options.bootstrap, "seed": options.seed,
                           "level": options.level, "by": by, "metrics": {}}
    cells: Dict[tuple, List[Dict[str, Any]]] = {}
    for r in ranked:
        cells.setdefault((r["metric"], r["dim"], r["key"]), []).append(r)
    for (metric, dim, key), rows in sorted(cells.items()):
        table = _rows(rows, ci, metric, dim, key)
        place = out["metrics"].setdefault(metric, {})
        if dim == "overall":
            place["overall"] = table
        else:
            place.setdefault(dim, {})[key] = table
    return out


def _sql_list(items: Sequence[str]) -> str:
    return "(%s)" % ", ".join("'%s'" % i.replace("'", "''") for i in items)


def _rows(rows: List[Dict[str, Any]], ci: Dict[tuple, tuple], metric: str, dim: str, key: str) -> List[Dict[str, Any]]:
    """One cell's runs in position order, with intervals, tie groups and the runs each is tied with."""
    def interval(name: str) -> Optional[List[float]]:
        got = ci.get((dim, key, name))
        return None if got is None else [got[0], got[1]]

    def significant(a: int, b: int) -> bool:
        i, j = sorted((a, b))
        got = ci.get((dim, key, "%s#diff#%d-%d" % (metric, i, j)))
        return got is not None and (got[0] > 0 or got[1] < 0)

    order = [r["run_index"] for r in rows]
    group = groups(order, significant)
    name = {r["run_index"]: r["run_id"] for r in rows}
    return [{"position": r["position"], "run_id": r["run_id"], "value": r["value"], "n": r["n"],
             "ci": interval("%s#value#%d" % (metric, r["run_index"])), "rank": r["rank"],
             "rank_ci": interval("%s#rank#%d" % (metric, r["run_index"])), "group": group[r["run_index"]],
             "tied_with": [name[o] for o in order if o != r["run_index"] and not significant(r["run_index"], o)]}
            for r in rows]


COLUMNS = ("position", "run", "value", "interval", "n", "rank", "rank interval", "group", "tied with")


def _span(ci: Optional[List[float]], fmt: str) -> str:
    return "" if ci is None else (fmt + ".." + fmt) % (ci[0], ci[1])


def table_rows(rows: List[Dict[str, Any]]) -> List[List[Any]]:
    """A cell's rows as the columns of COLUMNS (text for the intervals and the ties)."""
    return [[r["position"], r["run_id"], r["value"], _span(r["ci"], "%.4f"), r["n"], r["rank"],
             _span(r["rank_ci"], "%g"), r["group"], " ".join(r["tied_with"])] for r in rows]


def cells(doc: Dict[str, Any]) -> List[tuple]:
    """(title, rows) of every ranked cell: each metric overall, then per group of `by` in key order."""
    out = []
    for metric, place in sorted(doc["metrics"].items()):
        if "overall" in place:
            out.append(("%s, overall" % metric, place["overall"]))
        for key, rows in sorted(place.get(doc["by"] or "", {}).items()):
            out.append(("%s, %s=%s" % (metric, doc["by"], key), rows))
    return out


def header(doc: Dict[str, Any]) -> str:
    return ("%d runs ranked by paired bootstrap (B=%d, seed %d, %g%% intervals); a group holds runs whose "
            "difference from its first run is not significant" % (len(doc["runs"]), doc["bootstrap"], doc["seed"],
                                                                   doc["level"] * 100))


def markdown(doc: Dict[str, Any]) -> str:
    lines = ["# Rank of %s" % ", ".join(doc["runs"]), "", header(doc) + ".", ""]
    for title, rows in cells(doc):
        lines += ["## %s" % title, "", "| %s |" % " | ".join(COLUMNS), "|%s" % ("---|" * len(COLUMNS))]
        for row in table_rows(rows):
            lines.append("| %s |" % " | ".join("%.4f" % v if isinstance(v, float) else str(v) for v in row))
        lines.append("")
    return "\n".join(lines)
