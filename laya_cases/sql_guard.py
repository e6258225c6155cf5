"""`laya-cases sql` is read-only: one statement, classified by DuckDB's own parser, before it runs.

A query may read (SELECT and its forms: WITH, FROM-first, VALUES, DESCRIBE, SUMMARIZE, SHOW; EXPLAIN of
one). Anything that writes or loads (COPY, EXPORT, ATTACH, INSTALL/LOAD, SET, CREATE, ...) is refused;
with allow_write, `COPY ... TO '<file>'` is accepted when the file is outside the warehouse.
"""
from __future__ import annotations

import os
from pathlib import Path

import duckdb

from . import UsageError

_READS = {duckdb.StatementType.SELECT}


def check_query(query: str, root: Path, allow_write: bool = False):
    """Raise UsageError unless `query` is exactly one statement this mode allows; its statement type."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    if not statements:
        raise UsageError("the query contains no SQL statement")
    if len(statements) > 1:
        raise UsageError("the query holds %d statements; give one (nothing was run)" % len(statements))
    try:
        _check(statements[0], root, allow_write)
    except duckdb.Error:                  # e.g. EXPLAIN (options) ...: what it runs cannot be told apart
        raise UsageError("sql is read-only: cannot tell what this statement runs") from None
    return statements[0].type


def check_output(target: str, root: Path) -> str:
    """`sql --out FILE`: the file our own COPY writes the result to, refused in, under or above the
    warehouse (as a user's COPY target is) and when it is a URL."""
    if not target:
        raise UsageError("--out: the file name is empty")
    if "://" in target:
        raise UsageError("--out %r: only local files may be written" % target)
    if _inside(target, root):
        raise UsageError("--out %r is in, under or above the warehouse %s: the store is written only by "
                         "ingest and run" % (target, root))
    return target


def _check(statement, root: Path, allow_write: bool) -> None:
    kind = statement.type
    if kind in _READS:
        return
    if kind == duckdb.StatementType.EXPLAIN:          # EXPLAIN ANALYZE runs the statement it explains
        _check(_explained(statement.query), root, allow_write)
        return
    name = kind.name.replace("_", " ")
    if kind == duckdb.StatementType.COPY and allow_write:
        target = copy_target(statement.query)
        if _inside(target, root):
            raise UsageError("COPY target %r is in, under or above the warehouse %s: the store is written "
                             "only by ingest and run" % (target, root))
        return
    if kind == duckdb.StatementType.COPY:
        raise UsageError("sql is read-only: COPY writes files; add --allow-write to COPY ... TO a file "
                         "outside the warehouse")
    raise UsageError("sql is read-only: %s statements are refused (queries only: SELECT, WITH, "
                     "DESCRIBE, SUMMARIZE, EXPLAIN)" % name)


def _explained(text: str):
    """The statement after EXPLAIN [ANALYZE]."""
    tokens = duckdb.tokenize(text)
    start = 1
    if len(tokens) > 1 and text[tokens[1][0]:].split(None, 1)[0].lower() == "analyze":
        start = 2
    inner = duckdb.extract_statements(text[tokens[start][0]:]) if len(tokens) > start else []
    if len(inner) != 1:
        raise UsageError("sql is read-only: cannot tell what this EXPLAIN runs")
    return inner[0]


def copy_target(text: str) -> str:
    """The file of `COPY <source> TO '<file>' ...`; UsageError for COPY FROM or a non-literal target."""
    tokens = duckdb.tokenize(text)
    depth = 0
    for i, (pos, kind) in enumerate(tokens):
        word = _token_text(text, tokens, i)
        if kind == duckdb.token_type.operator:
            depth += word.count("(") - word.count(")")
        elif depth == 0 and kind == duckdb.token_type.keyword and word.lower() in ("to", "from"):
            nxt = i + 1
            if word.lower() == "to" and nxt < len(tokens) and tokens[nxt][1] == duckdb.token_type.string_const:
                literal = _token_text(text, tokens, nxt)
                return literal[1:-1].replace("''", "'")
            break
    raise UsageError("with --allow-write, sql accepts COPY ... TO '<file>' only (a quoted file name)")


def _token_text(text: str, tokens, i: int) -> str:
    end = tokens[i + 1][0] if i + 1 < len(tokens) else len(text)
    return text[tokens[i][0]:end].strip()


def _inside(target: str, root: Path) -> bool:
    """Whether writing `target` could touch the warehouse (a URL, or a path at or under its root)."""
    if "://" in target:
        raise UsageError("COPY target %r: only local files may be written" % target)
    path = os.path.realpath(os.path.expanduser(target))
    store = os.path.realpath(str(root))
    return path == store or path.startswith(store.rstrip(os.sep) + os.sep) or store.startswith(path + os.sep)
