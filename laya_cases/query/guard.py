"""`laya-cases sql` runs only reads, by construction: the user's statement is run as the subquery of
`SELECT * FROM (...)`, which DuckDB's own parser must read as exactly one statement, so no COPY, ATTACH,
EXPORT, INSTALL, SET or CREATE can run whatever its quoting (a dollar-quoted or E'' file name, a
FILENAME_PATTERN that climbs out of a folder: what a token parse of COPY's options once missed).

A query may read (SELECT and its forms: WITH, FROM-first, VALUES, PIVOT/UNPIVOT, DESCRIBE, SUMMARIZE,
SHOW; EXPLAIN [ANALYZE] of one). The result reaches a file only through `--out`, which our own COPY writes
after the store has refused any path in, under or above it. The statement is classified first only to name
what was refused.
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from laya_cases.core.errors import UsageError
from laya_cases.store.outputs import refuse_output, store_roots

_READS = {duckdb.StatementType.SELECT, duckdb.StatementType.MULTI}     # MULTI: a PIVOT (its ENUM, then the select)
NO_COPY = ("sql does not run COPY: write the result with --format csv|json|parquet --out FILE (outside the "
           "warehouse)")


def check_query(query: str, root: Path, allow_write: bool = False) -> str:
    """The text to run for `query` (its one read statement wrapped as a subquery, or EXPLAIN of that);
    UsageError for anything else. `allow_write` is refused: sql no longer runs a user's COPY."""
    if allow_write:
        raise UsageError("--allow-write is gone: " + NO_COPY)
    kind, text = _one(query)
    if kind == duckdb.StatementType.EXPLAIN:
        head, inner = _explained(text)
        return head + _wrapped(inner)
    if kind not in _READS:
        _refuse(kind)
    return _wrapped(text)


def _one(query: str):
    """(type, text) of the only statement of `query`, as DuckDB's parser reads it."""
    try:
        query.encode("utf-8")
        statements = duckdb.extract_statements(query)
        kinds = [s.type for s in statements]
    except UnicodeError:
        raise UsageError("the query is not valid UTF-8 text (a lone surrogate?)") from None
    except duckdb.Error as exc:
        raise UsageError("query failed: %s" % str(exc).splitlines()[0]) from None
    except ValueError:                   # a statement this duckdb build cannot name, e.g. UPDATE EXTENSIONS
        raise UsageError("sql is read-only: this statement is not a query (queries only: SELECT, WITH, "
                         "DESCRIBE, SUMMARIZE, EXPLAIN)") from None
    if not statements:
        raise UsageError("the query contains no SQL statement")
    if len(statements) > 1:
        raise UsageError("the query holds %d statements; give one (nothing was run)" % len(statements))
    return kinds[0], _without_semicolon(statements[0].query)


def _without_semicolon(text: str) -> str:
    """The statement without its closing `;` (and a comment after it), so that it reads as a subquery."""
    tokens = [t for t in duckdb.tokenize(text) if t[1] != duckdb.token_type.comment]
    if tokens and text[tokens[-1][0]:].lstrip().startswith(";"):
        return text[:tokens[-1][0]]
    return text


def _refuse(kind) -> None:
    name = kind.name.replace("_", " ")
    if kind == duckdb.StatementType.COPY:
        raise UsageError("sql is read-only: COPY writes files; " + NO_COPY)
    raise UsageError("sql is read-only: %s statements are refused (queries only: SELECT, WITH, "
                     "DESCRIBE, SUMMARIZE, EXPLAIN)" % name)


def _wrapped(text: str) -> str:
    """`SELECT * FROM (text)`, which must still be one statement: text that closes the parenthesis to add
    a statement of its own (`SELECT 1); COPY ...`) is refused."""
    wrapped = "SELECT * FROM (\n%s\n)" % text
    try:
        statements = duckdb.extract_statements(wrapped)
    except (duckdb.Error, ValueError, UnicodeError):
        statements = []
    if len(statements) != 1 or statements[0].type not in _READS:
        raise UsageError("sql is read-only: give one query (SELECT, WITH, DESCRIBE, SUMMARIZE, EXPLAIN)")
    return wrapped


def _explained(text: str):
    """("EXPLAIN [ANALYZE] ", the statement after it), which must itself be one read."""
    tokens = duckdb.tokenize(text)
    start = 1
    if len(tokens) > 1 and text[tokens[1][0]:].split(None, 1)[0].lower() == "analyze":
        start = 2
    if len(tokens) <= start or text[tokens[start][0]:].lstrip().startswith("("):   # EXPLAIN (options) ...
        raise UsageError("sql is read-only: cannot tell what this EXPLAIN runs")
    kind, inner = _one(text[tokens[start][0]:])
    if kind not in _READS:
        _refuse(kind)
    return ("EXPLAIN ANALYZE " if start == 2 else "EXPLAIN "), inner


def check_output(target: str, root: Path) -> str:
    """`sql --out FILE`: the file our own COPY writes the result to, checked as every output path is
    (store_paths.refuse_output: not in, under or above a store, writable, no URL)."""
    refuse_output(target, "--out", store_roots(str(root)))
    return target
