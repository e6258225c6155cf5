"""Loading and running the SQL in sql/: one place that reads files, checks parameters and binds them.

Each .sql file starts with a comment header naming its spec rules, grain, input, `params:` and
output. Values are always bound as named parameters (`$name`), never pasted into the text, and a
call whose parameters differ from the header is refused (a test checks every header too).
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Optional

import duckdb

from laya_cases.core.errors import UsageError

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@lru_cache(maxsize=None)
def text(name: str) -> str:
    """The text of sql/<name> (e.g. "metrics/ece.sql"), from the installed package."""
    return resources.files("laya_cases_sql").joinpath(name).read_text(encoding="utf-8")


def header_params(name: str) -> List[str]:
    """The parameters a file's header declares (`-- params: a, b` or `none`)."""
    for line in text(name).splitlines():
        if line.startswith("-- params:"):
            value = line[len("-- params:"):].split("(")[0].strip()
            return [] if value in ("", "none") else [p.strip() for p in value.split(",")]
    raise ValueError("sql/%s has no '-- params:' header line" % name)


def used_params(name: str) -> List[str]:
    body = "\n".join(l for l in text(name).splitlines() if not l.lstrip().startswith("--"))
    return sorted(set(_PARAM.findall(body)))


def listing(folder: str) -> List[str]:
    return sorted("%s/%s" % (folder, p.name) for p in resources.files("laya_cases_sql").joinpath(folder).iterdir()
                  if p.name.endswith(".sql"))


def _bind(name: str, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    params = dict(params or {})
    declared = header_params(name)
    if sorted(params) != sorted(declared):
        raise ValueError("sql/%s takes parameters %s, got %s" % (name, declared, sorted(params)))
    return params


def query(con: duckdb.DuckDBPyConnection, name: str, params: Optional[Dict[str, Any]] = None):
    """Run sql/<name>; returns a DuckDB result (fetchall / fetch_arrow_table / pl), or another engine's
    (laya_cases/engines: it reads its own override of the file and translates it)."""
    if hasattr(con, "run_file"):
        return con.run_file(name, _bind(name, params))
    return con.execute(text(name), _bind(name, params))


def arrow(con: duckdb.DuckDBPyConnection, name: str, params: Optional[Dict[str, Any]] = None):
    """Run sql/<name> on DuckDB; its result as an Arrow table (a relation's, not the DB-API cursor's copy)."""
    return con.sql(text(name), params=_bind(name, params)).to_arrow_table()


def count(con: duckdb.DuckDBPyConnection, name: str, params: Optional[Dict[str, Any]] = None) -> int:
    """How many rows sql/<name> returns, counted by DuckDB (no rows reach Python)."""
    return con.execute("SELECT count(*) FROM (%s)" % text(name), _bind(name, params)).fetchone()[0]


def materialize(con: duckdb.DuckDBPyConnection, name: str, table: str,
                params: Optional[Dict[str, Any]] = None, view: bool = False) -> None:
    """CREATE TEMP TABLE <table> AS sql/<name>, so later files can read it by name; with `view`, a TEMP
    VIEW instead (a file whose header says `-- stored: view`, read once by a table built from it: its rows
    are never written out). Another engine materialises both (laya_cases/query/engines)."""
    if hasattr(con, "materialize_file"):            # another engine (laya_cases/engines)
        return con.materialize_file(name, table, _bind(name, params))
    bound = _bind(name, params)
    if view:
        if bound:
            raise ValueError("sql/%s is stored as a view and a view takes no parameters" % name)
        con.execute("CREATE OR REPLACE TEMP VIEW %s AS %s" % (quote_ident(table), text(name)))
        return
    con.execute("CREATE OR REPLACE TEMP TABLE %s AS %s" % (quote_ident(table), text(name)), bound)


def quote_ident(name: str) -> str:
    """The one identifier-escaping function."""
    return '"%s"' % name.replace('"', '""')


def rows(result) -> List[Dict[str, Any]]:
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, r)) for r in result.fetchall()]


# ---------------------------------------------------------------------------- exact summation
_SCALES = (Fraction(2) ** 40, Fraction(1, 2 ** 12), Fraction(1, 2 ** 64), Fraction(1, 2 ** 116))


def exact_total(s0, s1, s2, s3, rest, count=None) -> Optional[float]:
    """Round the finite limb sums of sql/macros/exact_sum.sql once, as math.fsum would (S3.3, S9.8).

    With `count` it is the mean: the rounded sum divided by count, as the reference's fsum / n
    (statistics.fmean) does bit for bit; only where that sum overflows binary64 (the reference
    crashes there) is the exact rational divided before rounding, so two 1e308 average 1e308.
    NaN and infinities never reach here: the macro decides those in SQL.
    """
    if s0 is None and rest is None:
        return None
    total = sum((Fraction(int(s or 0)) * scale for s, scale in zip((s0, s1, s2, s3), _SCALES)), Fraction(0))
    for value, weight in rest or ():              # (rest, w) pairs: exact, unlike a float sum of rest * w
        total += Fraction(value) * int(weight)
    try:
        rounded = float(total)                    # int / int true division: correctly rounded
    except OverflowError:
        if count:
            try:
                return float(total / int(count))
            except OverflowError:
                pass
        return math.inf if total > 0 else -math.inf
    return rounded / float(count) if count else rounded


# ---------------------------------------------------------------------------- memory (docs/report.md)
MEMORY_ENV, TEMP_ENV = "LAYA_CASES_MEMORY_LIMIT", "LAYA_CASES_TEMP_DIR"
DEFAULT_MEMORY_LIMIT = "1GiB"                # or 50% of physical RAM where that is less (DuckDB's own: 80%)
_SIZE = re.compile(r"^\s*(\d+(\.\d+)?\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)|\d+(\.\d+)?\s*%)\s*$", re.IGNORECASE)


def default_memory_limit() -> str:
    """DEFAULT_MEMORY_LIMIT, a fixed bound so a report's RSS does not grow with the machine (docs/scale.md,
    Memory), or "50%" on a machine with under 2 GiB of RAM."""
    import os

    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return DEFAULT_MEMORY_LIMIT
    return "50%" if ram < 2 * 2 ** 30 else DEFAULT_MEMORY_LIMIT


def memory_settings() -> Dict[str, str]:
    """{"memory_limit", "temp_directory"} every connection gets: DuckDB works within the limit and
    spills what does not fit to the temp directory (per process, removed when the connection closes).
    $LAYA_CASES_MEMORY_LIMIT: a size ("1.5GB", "800MiB") or a share of RAM ("25%") [default: 1 GiB];
    $LAYA_CASES_TEMP_DIR: where to spill [default: <system temp>/laya-cases-<uid>/<pid>]."""
    import os
    import tempfile

    limit = os.environ.get(MEMORY_ENV) or default_memory_limit()
    if not _SIZE.match(limit):
        raise UsageError("%s must be a size such as 2GB or 800MiB, or a share of RAM such as 25%%, got %r"
                         % (MEMORY_ENV, limit[:60]))
    temp = os.environ.get(TEMP_ENV)
    if not temp:
        parent = os.path.join(tempfile.gettempdir(), "laya-cases-%s" % getattr(os, "getuid", lambda: "user")())
        try:
            os.makedirs(parent, mode=0o700, exist_ok=True)     # DuckDB makes the last level only
        except OSError:
            parent = tempfile.gettempdir()
        temp = os.path.join(parent, str(os.getpid()))
    return {"memory_limit": limit.strip(), "temp_directory": temp}


def prepare_connection(con: duckdb.DuckDBPyConnection, functions: bool = True) -> None:
    """Memory limit and spill directory (memory_settings); lc_exact_total and the macros every metric
    file may call, unless not `functions` (registering a Python function imports numpy, ~0.1 s)."""
    from duckdb.sqltypes import DOUBLE, HUGEINT

    con.execute("SET enable_progress_bar = false")     # our own bars go to stderr; DuckDB's would mix in
    for name, value in memory_settings().items():
        con.execute("SET %s = '%s'" % (name, value.replace("'", "''")))
    if not functions:
        return

    limbs = [HUGEINT, HUGEINT, HUGEINT, HUGEINT, duckdb.list_type(duckdb.list_type(DOUBLE)), HUGEINT]
    con.create_function("lc_exact_total", exact_total, limbs, DOUBLE, null_handling="special", side_effects=False)
    for name in listing("macros"):
        con.execute(text(name))


def connect(wh, run_ids: Optional[List[str]] = None, variants: bool = False,
            functions: bool = True, runs_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The store's views (`wh.connect`: decisions, cases, errors, runs, slice_sets over the runs asked for)
    on a connection this library's queries can run on: memory settings, and unless not `functions`, the
    macros and lc_exact_total (`runs` needs none: it starts without numpy). `runs_only`: the `runs` view
    alone (`laya-cases runs`), where the store can leave the others out."""
    con = wh.connect(run_ids, variants, runs_only=True) if runs_only else wh.connect(run_ids, variants)
    prepare_connection(con, functions)
    return con
