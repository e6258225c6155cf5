"""sql/ in another engine's dialect: the DuckDB files translated by sqlglot at load time (docs/scale.md).

The files under sql/ stay the single source. A file is read from `sql/_<engine>/<same path>` when
that override exists (dbt's pattern: only where a construct has no translation, e.g. the exact-sum
macro's HUGEINT limbs and the risk-coverage ASOF join), else from sql/<path>. DuckDB macros
(sql/macros/) are expanded inline, since Spark SQL has no macros; `$name` parameters are bound
as typed literals in the tree (never pasted as text), so a value cannot change the statement.
"""
from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Tuple

from laya_cases.query import sql as sqlfiles

DIALECT = {"spark": "spark"}


def _exp():
    from sqlglot import exp
    return exp


def override(engine: str, name: str) -> str:
    """The path sqlfiles.text reads for `name` under `engine`: the override when it exists."""
    candidate = "_%s/%s" % (engine, name)
    return candidate if resources.files("laya_cases_sql").joinpath(candidate).is_file() else name


@lru_cache(maxsize=None)
def macros(engine: str) -> Dict[str, Tuple[Tuple[str, ...], Any]]:
    """lc_ macro name -> (parameter names, body tree) from sql/macros/ (overrides first)."""
    import sqlglot

    out: Dict[str, Tuple[Tuple[str, ...], Any]] = {}
    for name in sqlfiles.listing("macros"):
        for statement in sqlglot.parse(sqlfiles.text(override(engine, name)), read="duckdb"):
            if statement is None:
                continue
            function = statement.this
            out[function.this.name.lower()] = (tuple(p.name for p in function.expressions), statement.expression)
    return out


def _expand(tree, table: Dict[str, Tuple[Tuple[str, ...], Any]]):
    """Replace every call of a macro by its body with the arguments substituted, until none is left
    (each in parentheses, as DuckDB substitutes trees: `v - v % 1.0` of `x * c` stays (x * c) - ...)."""
    exp = _exp()

    def one(node):
        if isinstance(node, exp.Anonymous) and node.name.lower() in table:
            params, body = table[node.name.lower()]
            args = {p: exp.Paren(this=a.copy()) for p, a in zip(params, node.expressions)}
            return exp.Paren(this=body.copy().transform(
                lambda n: args[n.name].copy() if isinstance(n, exp.Column) and not n.table and n.name in args else n))
        return node

    for _ in range(20):
        before = tree.sql()
        tree = tree.transform(one)
        if tree.sql() == before:
            return tree
    raise ValueError("sql/macros: macros call each other too deeply")


def _portable(tree):
    """DuckDB's `range(a, b) t(x)` as Spark's range table function (sqlglot's form loses the alias), a list
    comprehension as transform(), and a windowed value inside arithmetic in parentheses."""
    exp = _exp()

    def one(node):
        if isinstance(node, exp.Table) and isinstance(node.this, exp.GenerateSeries) \
                and node.this.args.get("is_end_exclusive"):
            series = node.this
            call = exp.Anonymous(this="range", expressions=[series.args["start"].copy(), series.args["end"].copy()])
            return exp.Table(this=call, alias=node.args.get("alias"))
        if isinstance(node, exp.Array) and len(node.expressions) == 1 \
                and isinstance(node.expressions[0], exp.Comprehension) and not node.expressions[0].args.get("condition"):
            loop = node.expressions[0]              # [f(t) FOR t IN xs] -> transform(xs, t -> f(t))
            return exp.Anonymous(this="transform", expressions=[
                loop.args["iterator"].copy(), exp.Lambda(this=loop.this.copy(), expressions=[loop.expression.copy()])])
        if isinstance(node, exp.Window) and isinstance(node.parent, exp.Binary):
            return exp.Paren(this=node.copy())     # Spark reads `OVER o - x` as the window name `o-x`
        if isinstance(node, exp.Anonymous) and node.name.lower() in _FUNCTIONS:
            return _FUNCTIONS[node.name.lower()](exp, *[a.copy() for a in node.expressions])
        return node

    return tree.transform(one)


#: DuckDB functions sqlglot passes through unchanged that Spark names or spells otherwise (NULL in, NULL out)
_FUNCTIONS = {
    # isfinite(x): not NaN and below infinity in magnitude (Spark's isnan(NULL) is false, abs(NULL) < inf NULL)
    "isfinite": lambda exp, x: exp.Paren(this=exp.and_(
        exp.Not(this=exp.IsNan(this=x.copy())),
        exp.LT(this=exp.Abs(this=x), expression=exp.Cast(this=exp.Literal.string("Infinity"),
                                                          to=exp.DataType.build("DOUBLE"))))),
    "suffix": lambda exp, s, t: exp.Anonymous(this="endswith", expressions=[s, t]),
}


@lru_cache(maxsize=512)
def tree(engine: str, source: str):
    """The parsed, macro-expanded tree of one DuckDB statement."""
    import sqlglot

    return _portable(_expand(sqlglot.parse_one(source, read="duckdb"), macros(engine)))


def file_tree(engine: str, name: str):
    return tree(engine, sqlfiles.text(override(engine, name)))


def literal(value: Any):
    """A typed literal: doubles as CAST('<repr>' AS DOUBLE) (exact, NaN and infinities too)."""
    exp = _exp()
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        text = repr(value) if math.isfinite(value) else {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[repr(value)]
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("DOUBLE"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[literal(v) for v in value])
    raise TypeError("cannot bind a %s as a SQL literal" % type(value).__name__)


def render(engine: str, parsed, params: Dict[str, Any]) -> str:
    """The statement in the engine's dialect with every $name bound."""
    exp = _exp()
    missing: List[str] = []

    def bind(node):
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            key = node.name
            if key not in params:
                missing.append(key)
                return node
            return literal(params[key])
        return node

    out = parsed.copy().transform(bind)
    if missing:
        raise ValueError("no value for parameter(s) %s" % sorted(set(missing)))
    return out.sql(dialect=DIALECT[engine], comments=False)
