"""The report: every number comes from a query in sql/; this module binds, collects and renders.

Shape (S4.4, S9.1): the reference's `config`, `overall`, `slices`, `cases`, plus `extensions`
holding what laya-cases adds (counts beside every ratio, coverage cuts, reliability tables, the
risk-coverage curve, the run's identity) without touching a reference key (S0.2).
"""
from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.query import catalogue
from laya_cases.query import sql as sqlfiles
from laya_cases.core.answers import score_within_key
from laya_cases.query.resample import quantile_levels, replicate_batches

DIMENSIONS = ("language", "model", "qid", "tag")
#: What the report publishes and how is the metric catalogue (laya_cases/query/catalogue.py, the headers
#: of sql/metrics/): the report runs every evaluator and paired metric file it lists.
is_paired = catalogue.is_paired


def check_tolerance(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UsageError("--score-within: score_within tolerance must be finite and >= 0, got %r" % (value,))
    return float(value)


def check_threshold(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError("--threshold must be a finite number, got %r" % (value,))
    return float(value)


def check_bootstrap(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (value == 0 or 100 <= value <= 100000):
        raise UsageError("--bootstrap must be 0 (off) or a number of replicates in [100, 100000], got %r" % (value,))
    return value


def check_coverage(value: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not (0.0 < value <= 1.0):
        raise UsageError("--coverage must be a number in (0, 1], got %r" % (value,))
    return float(value)


@dataclass
class Options:
    score_within: Sequence[float] = ()
    coverages: Sequence[float] = ()          # extra coverage points, extensions only (S9.3)
    thresholds: Sequence[float] = ()         # confidence-threshold cuts, extensions only (S9.3)
    include_cases: bool = True
    bootstrap: int = 0                       # replicates for percentile intervals (S9.5); 0 = none
    seed: int = 0
    level: float = 0.95
    engine: str = "duckdb"                   # the engine that runs the SQL (laya_cases/engines, docs/scale.md)
    spark_master: Optional[str] = None       # --engine spark: the master URL [default: $SPARK_REMOTE, local[*]]
    #: called as progress(done, total) while a long report works (bootstrap replicates); None = silent
    progress: Optional[Callable[[int, int], None]] = field(default=None, repr=False, compare=False)
    #: called as phase(done, total, sql_file) before each table of the metric pipeline; None = silent
    phase: Optional[Callable[[int, int, str], None]] = field(default=None, repr=False, compare=False)


@dataclass
class Metrics:
    """Everything computed for one run: values, their counts, and the group list."""

    values: Dict[tuple, Dict[str, float]] = field(default_factory=dict)       # (dim, key) -> metric -> value
    counts: Dict[tuple, Dict[str, Dict[str, Any]]] = field(default_factory=dict)
    groups: List[tuple] = field(default_factory=list)
    group_cases: Dict[tuple, int] = field(default_factory=dict)                # (dim, key) -> cases in it
    reliability: Dict[tuple, List[Dict[str, Any]]] = field(default_factory=dict)
    curve: List[Dict[str, Any]] = field(default_factory=list)
    timing: Dict[str, float] = field(default_factory=dict)
    timing_n: Dict[str, int] = field(default_factory=dict)
    requested: List[str] = field(default_factory=list)                         # every metric name asked for


def _collect(metrics: Metrics, result_rows: Iterable[Dict[str, Any]], name: Optional[str] = None) -> None:
    for row in result_rows:
        group = (row.pop("dim"), row.pop("key"))
        metric = name or row.pop("metric")
        row.pop("metric", None)
        value = row.pop("value")
        metrics.values.setdefault(group, {})[metric] = value
        metrics.counts.setdefault(group, {})[metric] = row


def published_metrics(options: Options) -> List[tuple]:
    """(name, metric file, parameters) of every published evaluator and paired metric run."""
    return [(name, m.path, params) for m in catalogue.of_kind("evaluator", "paired")
            for name, params in catalogue.published(m, options)]


def extension_cuts(options: Options) -> List[tuple]:
    """(name, metric file, parameters) of the extension-only cuts asked for (S9.3)."""
    return ([("coverage:%r" % c, "metrics/selective_accuracy.sql", {"coverage": c}) for c in options.coverages]
            + [("coverage:confidence>=%r" % t, "metrics/threshold_cut.sql", {"threshold": t})
               for t in options.thresholds])


def _bind_run(path: str, params: Optional[Dict[str, Any]], run_id: str) -> Dict[str, Any]:
    return dict(params or {}, **({"run_id": run_id} if "run_id" in sqlfiles.header_params(path) else {}))


def compute(con: duckdb.DuckDBPyConnection, run_id: str, options: Options) -> Metrics:
    """Run the whole metric library over one run (one scan of its partition, then small tables)."""
    m = Metrics()
    runs = published_metrics(options)
    timing = [t.path for t in catalogue.of_kind("timing")]
    needed = catalogue.inputs_of([p for _, p, _ in runs] + ["pipeline/groups.sql"]) + ["reliability"]
    cuts = [p["coverage"] for _, path, p in runs + extension_cuts(options) if path == "metrics/selective_accuracy.sql"]
    catalogue.materialize_all(con, catalogue.build_order(needed, ("pipeline", "metrics")),
                              {"run_id": run_id, "coverages": cuts}, options.phase)
    for r in sqlfiles.rows(sqlfiles.query(con, "pipeline/groups.sql")):
        m.groups.append((r["dim"], r["key"]))
        m.group_cases[(r["dim"], r["key"])] = r["n_cases"]
    for name, path, params in runs:
        _collect(m, sqlfiles.rows(sqlfiles.query(con, path, _bind_run(path, params, run_id))), name)
        m.requested.append(name)
    schema = sqlfiles.rows(sqlfiles.query(con, "report/run_schema.sql", {"run_id": run_id}))
    path, names = catalogue.schema_metrics().get(schema[0]["schema"] if schema else None, (None, ()))
    if path:                                # S7.19, S7.20: a shortlist or tournament run's own metrics
        _collect(m, sqlfiles.rows(sqlfiles.query(con, path, {"run_id": run_id})))
        m.requested.extend(names)
    for name, path, params in extension_cuts(options):
        _collect(m, sqlfiles.rows(sqlfiles.query(con, path, _bind_run(path, params, run_id))), name)
    for row in sqlfiles.rows(con.execute("SELECT * FROM reliability ORDER BY dim, key, bin")):
        group = (row.pop("dim"), row.pop("key"))
        for k in ("n_paired", "n_unbinned_out_of_range", "n_unbinned_nan"):
            row.pop(k)
        m.reliability.setdefault(group, []).append(row)
    m.curve = sqlfiles.rows(sqlfiles.query(con, "pipeline/risk_coverage.sql", {"coverages": cuts}))
    for path in timing:
        for row in sqlfiles.rows(sqlfiles.query(con, path, {"run_id": run_id})):
            m.timing[row["metric"]] = row["value"]
            m.timing_n[row["metric"]] = row["n"]
    return m


def ratio_metrics(options: Options) -> List[tuple]:
    """The published ratios that get bootstrap intervals: (name, metric file, parameters)."""
    return [(name, m.path, params) for m in catalogue.metrics() if m.interval
            for name, params in catalogue.published(m, options)]


def bootstrap(con: duckdb.DuckDBPyConnection, run_id: str, options: Options, metrics: Metrics) -> None:
    """Percentile intervals for every published ratio, overall and per slice (S9.5)."""
    table = replicate_values(con, run_id, options)
    if table is None:
        return
    con.register("boot_values", table)
    lower, upper = quantile_levels(options.level)
    for r in sqlfiles.rows(sqlfiles.query(con, "bootstrap/intervals.sql", {"lower": lower, "upper": upper})):
        entry = metrics.counts.get((r["dim"], r["key"]), {}).get(r["metric"])
        if entry is not None:
            entry["ci"] = {"level": options.level, "lower": r["lower"], "upper": r["upper"], "B": options.bootstrap,
                           "B_used": r["B_used"], "seed": options.seed, "unit": "row"}


def replicate_values(con: duckdb.DuckDBPyConnection, run_id: str, options: Options, rows=None,
                     numbered: bool = False):
    """boot_values (dim, key, metric, value; with `numbered`, also each value's replicate) of every
    published ratio over options.bootstrap replicates; None when there is no row to draw.

    Runs after `compute`: the replicate tables replace the point-estimate tables under the same names,
    so the very same metric files run on every replicate (the replicate rides in `dim`). Replicates are
    drawn and evaluated in batches (resample.replicate_batches), so memory does not grow with B. `rows`
    (ascending row_index values) are the units drawn, the run's own by default (bootstrap/rows.sql):
    runs drawn over the same rows with the same seed get the same draws, so their values pair (rank).
    """
    import numpy as np
    import pyarrow as pa

    if rows is None:
        rows = [r[0] for r in sqlfiles.query(con, "bootstrap/rows.sql", {"run_id": run_id}).fetchall()]
    rows = np.array(rows, dtype=np.int64)
    n, b = len(rows), options.bootstrap
    if n == 0:
        return None
    ratios = ratio_metrics(options)
    cuts = [p["coverage"] for _, path, p in ratios if path == "metrics/selective_accuracy.sql"]   # level_points
    order = catalogue.build_order(catalogue.inputs_of([p for _, p, _ in ratios]), ("bootstrap", "pipeline"))
    weighted = {"boot_weights"}                # tables to rebuild per batch: those that read the weights
    for f in order:
        if weighted.intersection(f.inputs):
            weighted.add(f.name)
    cells: Dict[tuple, int] = {}               # (dim, key, metric) -> its code: 12 bytes a replicate value
    codes, values, numbers = array("i"), array("d"), array("i")
    for first, last, replicate, position, multiplicity in replicate_batches(options.seed, n, b):
        con.register("boot_weights", pa.table({"replicate": replicate, "row_index": rows[position],
                                               "w": multiplicity}))
        catalogue.materialize_all(con, [f for f in order if first == 0 or f.name in weighted],
                                  {"run_id": run_id, "coverages": cuts})
        for name, path, params in ratios:
            for r in sqlfiles.rows(sqlfiles.query(con, path, params)):
                dim, number = r["dim"].split("@", 1)
                codes.append(cells.setdefault((dim, r["key"], name), len(cells)))
                values.append(math.nan if r["value"] is None else r["value"])
                if numbered:
                    numbers.append(int(number))
        con.unregister("boot_weights")
        if options.progress is not None:
            options.progress(last, b)
    table = _replicate_values(cells, codes, values, decoded=hasattr(con, "run_file"))
    return table.append_column("replicate", pa.array(np.frombuffer(numbers, dtype=np.int32) if numbers
                                                     else np.empty(0, np.int32))) if numbered else table


def _replicate_values(cells: Dict[tuple, int], codes, values, decoded: bool):
    """boot_values (dim, key, metric, value) for intervals.sql: the three names dictionary-encoded over
    the cell codes (another engine gets plain strings), so B replicates cost 12 bytes a value."""
    import numpy as np
    import pyarrow as pa

    index = pa.array(np.frombuffer(codes, dtype="i%d" % codes.itemsize) if codes else np.empty(0, np.int32))
    names = list(zip(*cells)) or [(), (), ()]
    columns = {c: pa.DictionaryArray.from_arrays(index, pa.array(list(part), pa.string()))
               for c, part in zip(("dim", "key", "metric"), names)}
    if decoded:
        columns = {c: a.dictionary_decode() for c, a in columns.items()}
    columns["value"] = pa.array(np.frombuffer(values, dtype=np.float64) if values else np.empty(0), pa.float64())
    return pa.table(columns)


def _published(metrics: Metrics, group: tuple) -> Dict[str, float]:
    """The reference-shaped metric map of a group: paired metrics that are NaN are dropped (S3.3)."""
    out = {}
    for name, value in metrics.values.get(group, {}).items():
        if name.startswith("coverage:") or value is None:
            continue
        if is_paired(name) and isinstance(value, float) and math.isnan(value):
            continue
        out[name] = value
    return out


def _counts(metrics: Metrics, group: tuple, published: Dict[str, float]) -> Dict[str, Any]:
    counts = metrics.counts.get(group, {})
    out: Dict[str, Any] = {"n_cases": metrics.group_cases.get(group, 0)}
    for name in metrics.requested:
        if name in published:
            out[name] = _json_ready(counts.get(name, {}))
        elif name in counts:
            out[name] = {"n": 0, "reason": "nan_dropped", "n_paired": counts[name].get("n_paired", counts[name].get("N"))}
        else:
            out[name] = {"n": 0, "reason": "no_applicable_case"}
    coverage = {name[len("coverage:"):]: _json_ready(dict(c, selective_accuracy=metrics.values[group][name]))
                for name, c in counts.items() if name.startswith("coverage:")}
    if coverage:
        out["coverage"] = coverage
    if group in metrics.reliability:
        out["reliability"] = [_json_ready(r) for r in metrics.reliability[group]]
    return out


def _json_ready(value: Any) -> Any:
    """Counts come back from DuckDB as int/float; a NaN cut confidence is written as null (S9.3)."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def case_fields(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """The table `case_fields` report/cases.sql and case_texts.sql join: a benchmark's own fields of each
    case (its schema's `-- case_fields_for:` file: a shortlist case's kept labels and status, S7.19), else
    no row. The report knows no benchmark: the file says which runs it serves."""
    schema = sqlfiles.rows(sqlfiles.query(con, "report/run_schema.sql", {"run_id": run_id}))
    path = catalogue.schema_case_fields().get(schema[0]["schema"] if schema else None, "report/case_fields_none.sql")
    sqlfiles.materialize(con, path, "case_fields", _bind_run(path, None, run_id))


def cases(con: duckdb.DuckDBPyConnection, run_id: str, score_within: Sequence[float]) -> List[Dict[str, Any]]:
    """The reference `cases` list: row order, then `expected` order (S4.4), each with the run's own
    case fields (case_fields)."""
    case_fields(con, run_id)
    out = []
    keys = [score_within_key(t) for t in score_within]
    decode = json.JSONDecoder().decode
    seen: Dict[str, Any] = {}                 # languages, models and labels repeat: parse each text once

    def value(text: Optional[str]) -> Any:
        if text is None:
            return None
        if text not in seen:
            seen[text] = decode(text)
        return seen[text]

    result = sqlfiles.query(con, "report/cases.sql", {"run_id": run_id, "tolerances": [float(t) for t in score_within]})
    while True:
        chunk = result.fetchmany(10000)
        if not chunk:
            break
        for (qid, language, model, tags, expected, answer, conf, correct, ca, na, mae, within, fields) in chunk:
            scores = {"choice_accuracy": ca, "noul_accuracy": na, "score_mae": mae, "mean_confidence": conf}
            scores.update(zip(keys, within))
            out.append({"qid": qid, "language": value(language), "model": value(model), "tags": list(tags or []),
                        "expected": value(expected), "answer": decode(answer),
                        "confidence": conf, "correct": correct, "scores": scores})
            if fields is not None:
                out[-1].update(decode(fields))
        if len(seen) > 100000:
            seen.clear()
    return out


def answer_type_counts(con: duckdb.DuckDBPyConnection, run_id: str) -> Dict[str, int]:
    """{"n_score", "n_cases"} of a run (the S3.7 warning names both)."""
    return sqlfiles.rows(sqlfiles.query(con, "report/answer_types.sql", {"run_id": run_id}))[0]


def build(con: duckdb.DuckDBPyConnection, run_id: str, options: Options) -> Dict[str, Any]:
    """The full report document for one committed run."""
    run = sqlfiles.rows(con.execute("SELECT * FROM runs WHERE run_id = $run_id", {"run_id": run_id}))[0]
    metrics = compute(con, run_id, options)
    if options.bootstrap:
        bootstrap(con, run_id, options, metrics)
    config = json.loads(run["config_json"])
    # the reference always records the gate it applied, an empty one too (S0.2, S6.2); a gate replaces it
    config.setdefault("thresholds", {"min": {}, "max": {}, "baseline_tolerance": {}})
    if options.score_within:
        config["score_within"] = [float(t) for t in options.score_within]
    overall = _published(metrics, ("overall", ""))
    overall.update(metrics.timing)
    slices: Dict[str, Dict[str, Dict[str, float]]] = {}
    ext_slices: Dict[str, Dict[str, Any]] = {}
    for dim, key in metrics.groups:
        if dim == "overall":
            continue
        published = _published(metrics, (dim, key))
        slices.setdefault(dim, {})[key] = published
        ext_slices.setdefault(dim, {})[key] = _counts(metrics, (dim, key), published)
    ext_overall = _counts(metrics, ("overall", ""), _published(metrics, ("overall", "")))
    ext_overall["risk_coverage"] = [_json_ready(p) for p in metrics.curve]
    for name, n in metrics.timing_n.items():
        ext_overall[name] = {"n": n}
    doc = {
        "config": config,
        "overall": overall,
        "slices": {dim: slices[dim] for dim in DIMENSIONS if dim in slices},
        "cases": cases(con, run_id, options.score_within) if options.include_cases else [],
        "extensions": {
            "run": {"run_id": run_id, **({"bootstrap": {"B": options.bootstrap, "seed": options.seed,
                                                          "level": options.level, "unit": "row"}}
                                         if options.bootstrap else {}), "kind": run["kind"], "n_rows": run["n_rows"], "n_cases": run["n_cases"],
                    "n_errors": run["n_errors"], "labelled_rows_sha256": run["labelled_rows_sha256"],
                    "schema_version": run["schema_version"], **json.loads(run["settings_json"] or "{}")},
            "overall": ext_overall,
            "slices": ext_slices,
        },
    }
    return doc


# ---------------------------------------------------------------------------- rendering (S4.5)
def dumps(doc: Dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True)


def text_lines(doc: Dict[str, Any], slice_dims: Sequence[str] = ()) -> List[str]:
    lines = ["%-18s %.4f" % (name, doc["overall"][name]) for name in sorted(doc["overall"])]
    for dim in slice_dims:
        for key, values in sorted(doc["slices"].get(dim, {}).items()):
            lines.append("  %s=%s  %s" % (dim, key, " ".join("%s=%.4f" % (k, v) for k, v in sorted(values.items()))))
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown(doc: Dict[str, Any]) -> str:
    lines = ["| metric | value |", "|---|---|"]
    for name in sorted(doc["overall"]):
        lines.append("| %s | %.4f |" % (name, doc["overall"][name]))
    for dim in sorted(doc["slices"]):
        groups = doc["slices"][dim]
        lines += ["", "### by %s" % dim, ""]
        names = sorted({m for g in groups.values() for m in g})
        lines.append("| %s | %s |" % (dim, " | ".join(names)))
        lines.append("|---|%s" % ("---|" * len(names)))
        for key in sorted(groups):
            cells = ["%.4f" % groups[key][m] if m in groups[key] else "" for m in names]
            lines.append("| %s | %s |" % (_cell(key), " | ".join(cells)))
    return "\n".join(lines) + "\n"
