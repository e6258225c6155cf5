"""The metric catalogue: what every file in sql/ is, read from its comment header (docs/sql.md).

One place says whether a metric is an evaluator mean or a paired metric, whether it is a per-case
0/1 rate (gateable by McNemar), order-dependent in the reference, a coverage metric, which family
the terminal table shows it in, and at which values a parametrised metric is published. The report,
the gates and the views derive their lists from here, and the order in which pipeline tables are
built is a topological order of the `-- input:` lines. A new metric is one SQL file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from laya_cases.query import sql as sqlfiles

#: Family order in the terminal table; a family not listed here comes after these.
FAMILY_ORDER = ("accuracy", "calibration", "selective", "timing")
KINDS = ("evaluator", "paired", "cut", "timing")
_KEY = re.compile(r"^-- ([a-z_]+): ?(.*)$")
_PLACEHOLDER = re.compile(r"<([a-z_]+)(%?)>")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def header(name: str) -> Dict[str, str]:
    """key -> text of sql/<name>'s leading `--` block; continuation lines join the key above."""
    keys: Dict[str, str] = {}
    last = None
    for line in sqlfiles.text(name).splitlines():
        if not line.startswith("--"):
            break
        match = _KEY.match(line)
        if match:
            last = match.group(1)
            keys[last] = match.group(2).strip()
        elif last is not None:
            keys[last] += " " + line[2:].strip()
    return keys


def _words(value: str) -> List[str]:
    """`a, b (why), c` -> [a, b, c]: comma-separated names, parenthesised notes dropped."""
    value = re.sub(r"\([^()]*\)", "", value)
    return [w.split()[0].rstrip(":") for w in value.split(",") if w.split()]


def _yes(value: Optional[str]) -> bool:
    return (value or "no").split()[0] == "yes"


@dataclass(frozen=True)
class SqlFile:
    path: str                       # "pipeline/levels.sql"
    what: str                       # metric, table, query, compare, gate, macro
    name: str                       # the first line's name: a table, a metric or a pattern
    inputs: Tuple[str, ...]
    params: Tuple[str, ...]


@dataclass(frozen=True)
class Metric:
    """One sql/metrics/ file with a `-- kind:` line."""

    path: str
    names: Tuple[str, ...]          # what it publishes: names, or one pattern like score_within_<tolerance>
    kind: str                       # evaluator | paired | cut | timing
    per_case: bool                  # a 0/1 value per case: McNemar-gateable (S6.5 significant_at)
    order_dependent: bool           # the reference's value depends on case order (numpy pairwise sums)
    coverage: bool                  # compared only under one coverage definition (S6.4 (c))
    interval: bool                  # gets a bootstrap percentile interval (S9.5)
    family: Optional[str]
    rank: int                       # position inside the family
    published_at: Tuple[float, ...] # values of the parameter the report always publishes
    option: Optional[str]           # the Options field whose values it is published at (opt-in)
    params: Tuple[str, ...]

    @property
    def pattern(self) -> bool:
        return any(_PLACEHOLDER.search(n) for n in self.names)

    @property
    def prefixes(self) -> Tuple[str, ...]:
        """Names, with a pattern cut at its placeholder (score_within_<tolerance> -> score_within_)."""
        return tuple(_PLACEHOLDER.split(n)[0] if _PLACEHOLDER.search(n) else n for n in self.names)

    def matches(self, metric: str) -> bool:
        return any(metric == p or (self.pattern and metric.startswith(p)) for p in self.prefixes)

    def key(self, value: float) -> str:
        """The published name at one parameter value: `<p>` is %g of it, `<p%>` a whole percentage."""
        return _PLACEHOLDER.sub(lambda m: "%d" % round(value * 100) if m.group(2) else "%g" % value, self.names[0])


@lru_cache(maxsize=None)
def files(folder: str) -> Tuple[SqlFile, ...]:
    out = []
    for path in sqlfiles.listing(folder):
        keys = header(path)
        what = next(iter(keys), "")
        first = keys.get(what, "").split(" -- ")[0].strip()
        out.append(SqlFile(path, what, first.split()[0] if first else "", tuple(_words(keys.get("input", ""))),
                           tuple(sqlfiles.header_params(path))))
    return tuple(out)


def _metric(path: str, keys: Dict[str, str]) -> Metric:
    kind = keys["kind"].split()[0]
    if kind not in KINDS:
        raise ValueError("sql/%s: unknown kind %r (one of %s)" % (path, kind, ", ".join(KINDS)))
    family = keys.get("family", "").split()
    at = keys.get("published_at", "").split("(")[0].strip()
    option = at if at.startswith("--") else None
    return Metric(path=path, names=tuple(_words(keys["metric"].split(" -- ")[0])), kind=kind,
                  per_case=_yes(keys.get("per_case")), order_dependent=_yes(keys.get("order_dependent")),
                  coverage=_yes(keys.get("coverage")), interval=_yes(keys.get("interval")),
                  family=family[0] if family else None, rank=int(family[1]) if len(family) > 1 else 0,
                  published_at=() if option or not at else tuple(float(v) for v in at.split(",")),
                  option=option[2:].replace("-", "_") if option else None,
                  params=tuple(sqlfiles.header_params(path)))


@lru_cache(maxsize=None)
def schema_metrics() -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """config schema -> (file, the metric names it publishes): a benchmark's metric file with a
    `-- for_schema:` line, which a report adds only for runs committed under that schema (sql/shortlist/).
    A benchmark adds its metrics to reports by such a file; the report knows no benchmark."""
    out = {}
    for folder in sorted(p.name for p in resources.files("laya_cases_sql").iterdir() if p.is_dir()):
        for path in sqlfiles.listing(folder):
            keys = header(path)
            if "for_schema" in keys:
                out[keys["for_schema"]] = (path, tuple(_words(keys["query"].split(" -- ")[0])))
    return out


@lru_cache(maxsize=None)
def schema_case_fields() -> Dict[str, str]:
    """config schema -> the file of its cases' own fields: a benchmark's table with a `-- case_fields_for:`
    line (row_index, qid_pos, fields_json), which a report joins to the cases of runs of those schemas."""
    out = {}
    for folder in sorted(p.name for p in resources.files("laya_cases_sql").iterdir() if p.is_dir()):
        for path in sqlfiles.listing(folder):
            for schema in _words(header(path).get("case_fields_for", "")):
                out[schema] = path
    return out


@lru_cache(maxsize=None)
def metrics() -> Tuple[Metric, ...]:
    """Every sql/metrics/ file that declares a `-- kind:`, in file-name order."""
    out = []
    for path in sqlfiles.listing("metrics"):
        keys = header(path)
        if "kind" in keys:
            out.append(_metric(path, keys))
    return tuple(out)


def clear() -> None:
    """Forget every cached file and header (a test adds or removes a SQL file)."""
    sqlfiles.text.cache_clear()
    files.cache_clear()
    metrics.cache_clear()
    schema_case_fields.cache_clear()


def find(metric: str) -> Optional[Metric]:
    return next((m for m in metrics() if m.matches(metric)), None)


def _has(metric: str, flag: str) -> bool:
    found = find(metric)
    return found is not None and bool(getattr(found, flag))


def is_paired(metric: str) -> bool:
    found = find(metric)
    return found is not None and found.kind == "paired"


def is_per_case(metric: str) -> bool:
    return _has(metric, "per_case")


def is_coverage_metric(metric: str) -> bool:
    return _has(metric, "coverage")


def of_kind(*kinds: str) -> List[Metric]:
    return [m for m in metrics() if m.kind in kinds]


def order_dependent() -> Tuple[str, ...]:
    return tuple(n for m in metrics() if m.order_dependent for n in m.names)


def per_case_names() -> List[str]:
    """Names as a user reads them: a pattern's placeholder shown as `*`."""
    return [_PLACEHOLDER.sub("*", n) for m in metrics() if m.per_case for n in m.names]


def published(m: Metric, options=None) -> List[Tuple[str, Optional[Dict[str, float]]]]:
    """(published name, parameters) for each run of one metric file: once, at each `published_at`
    value, or at each value of its Options field; timing's own run_id is bound by the caller."""
    if not m.pattern:
        return [(m.names[0] if len(m.names) == 1 else "", None)]
    values: Sequence[float] = m.published_at or (getattr(options, m.option, ()) if m.option else ())
    param = next(p for p in m.params if p != "run_id")
    return [(m.key(v), {param: v}) for v in values]


def families() -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """(family, prefixes in reading order) for the terminal table, the families in FAMILY_ORDER."""
    grouped: Dict[str, List[Metric]] = {}
    for m in metrics():
        if m.family:
            grouped.setdefault(m.family, []).append(m)
    order = [f for f in FAMILY_ORDER if f in grouped] + sorted(f for f in grouped if f not in FAMILY_ORDER)
    return tuple((f, tuple(p for m in sorted(grouped[f], key=lambda m: (m.rank, m.path)) for p in m.prefixes))
                 for f in order)


# ---------------------------------------------------------------------------- build order
def build_order(targets: Iterable[str], folders: Sequence[str]) -> List[SqlFile]:
    """The table files to materialise so `targets` (table names) can be read, dependencies first.

    A table is made by the first folder in `folders` that has a `-- table:` file of that name (so
    bootstrap/ overrides pipeline/); names no file makes are inputs from outside (the store, or a
    table the caller registers). Ties are broken by table name, so the order is deterministic.
    """
    makers: Dict[str, SqlFile] = {}
    for folder in folders:
        for f in files(folder):
            if f.what == "table" and f.name not in makers:
                makers[f.name] = f
    needed: Dict[str, SqlFile] = {}
    stack = [t for t in targets if t in makers]
    while stack:
        name = stack.pop()
        if name not in needed:
            needed[name] = makers[name]
            stack += [i for i in makers[name].inputs if i in makers and i != name]
    order: List[SqlFile] = []
    done: set = set()
    while len(order) < len(needed):
        ready = sorted(n for n, f in needed.items() if n not in done
                       and all(i in done or i not in needed or i == n for i in f.inputs))
        if not ready:
            raise ValueError("sql/ tables depend on each other in a cycle: %s" % sorted(set(needed) - done))
        done.add(ready[0])
        order.append(needed[ready[0]])
    return order


def inputs_of(paths: Iterable[str]) -> List[str]:
    """The input table names of some files (by path), e.g. what a set of metric files reads."""
    by_path = {f.path: f for folder in {p.split("/")[0] for p in paths} for f in files(folder)}
    return sorted({i for p in paths for i in by_path[p].inputs})


def materialize_all(con, order: Sequence[SqlFile], params: Dict[str, object], progress=None) -> None:
    """CREATE each table in order, binding to each file the parameters its header declares;
    progress(done, total, path), if given, is told which file is next (a bar names the phase)."""
    for i, f in enumerate(order):
        if progress is not None:
            progress(i, len(order), f.path)
        sqlfiles.materialize(con, f.path, f.name, {p: params[p] for p in f.params}, view=stored_as_view(f.path))


def stored_as_view(path: str) -> bool:
    """A table file whose header says `-- stored: view`: DuckDB keeps it as a view (sqlfiles.materialize)."""
    return header(path).get("stored", "").split(" ")[0] == "view"
