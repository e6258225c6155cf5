"""The SQL library's headers, and the schema's documentation (issue: foundation).

Every file under sql/ opens with a comment header, and nothing else is allowed before its SQL:

    -- <kind>: <name> [-- <summary>]      kind: metric, table, query, compare, gate or macro
    -- spec: <rule ids of semantics.md the file implements>
    -- grain: / -- input: / -- output:   (files that are one query; a macro file has no rows)
    -- params: <names> | none           must equal the $names the SQL uses (laya_cases.query.sql binds by it)

Macro files define functions, not rows: they need `spec:` and `params: none`, every object they
create is a `lc_` macro, and each macro named on the first line is defined in the file.
Continuation lines (`--` plus more spaces) extend the key above them.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

import pytest

from helpers import ROOT, SHARED
from laya_cases.store import schema
from laya_cases.query import sql as sqlfiles

SQL_ROOT = ROOT / "sql"
SQL_FILES = sorted(str(p.relative_to(SQL_ROOT)) for p in SQL_ROOT.rglob("*.sql"))
KINDS = ("metric", "table", "query", "compare", "gate", "macro")
QUERY_KEYS = ("spec", "grain", "input", "params", "output")
MACRO_KEYS = ("spec", "params")
_KEY = re.compile(r"^-- ([a-z_]+): ?(.*)$")
_RULE = re.compile(r"\bS(\d+)(?:\.(\d+))?\b")
SPEC = SHARED / "spec" / "semantics.md"


def header(name: str) -> Tuple[List[str], Dict[str, str]]:
    """(header lines, key -> text with continuation lines joined); the header is the leading `--` block."""
    lines = (SQL_ROOT / name).read_text(encoding="utf-8").splitlines()
    block: List[str] = []
    for line in lines:
        if not line.startswith("--"):
            break
        block.append(line)
    keys: Dict[str, str] = {}
    last = None
    for line in block:
        match = _KEY.match(line)
        if match:
            last = match.group(1)
            assert last not in keys, "sql/%s repeats the header key %r" % (name, last)
            keys[last] = match.group(2)
        elif last is not None:
            keys[last] += " " + line[2:].strip()
    return block, keys


def test_the_library_is_found():
    assert len(SQL_FILES) >= 10 and "metrics/ece.sql" in SQL_FILES and "macros/exact_sum.sql" in SQL_FILES


@pytest.mark.parametrize("name", SQL_FILES)
def test_header_block(name):
    block, keys = header(name)
    assert block, "sql/%s does not start with a comment header" % name
    first = _KEY.match(block[0])
    assert first and first.group(1) in KINDS, "sql/%s line 1 must be '-- <kind>: <name> -- <summary>'" % name
    kind = first.group(1)
    assert first.group(2).strip(), "sql/%s line 1 must name what the file computes" % name
    required = MACRO_KEYS if kind == "macro" else QUERY_KEYS
    missing = [k for k in required if not keys.get(k, "").strip()]
    assert not missing, "sql/%s header lacks %s" % (name, ", ".join("-- %s:" % k for k in missing))
    body = "\n".join(l for l in (SQL_ROOT / name).read_text(encoding="utf-8").splitlines()[len(block):]
                     if not l.lstrip().startswith("--"))
    assert body.strip(), "sql/%s has a header but no SQL" % name
    for key in required:                      # a key lower down would not be a header line
        assert not re.search(r"^-- %s:" % key, body, re.M)


@pytest.mark.parametrize("name", SQL_FILES)
def test_declared_params_equal_used_params(name):
    """laya_cases.query.sql refuses a call whose params differ from the header, so the header must be true."""
    assert sorted(sqlfiles.header_params(name)) == sqlfiles.used_params(name), name


@pytest.mark.parametrize("name", [n for n in SQL_FILES if n.startswith("macros/")])
def test_macro_files(name):
    block, keys = header(name)
    assert sqlfiles.header_params(name) == [] and sqlfiles.used_params(name) == []
    text = (SQL_ROOT / name).read_text(encoding="utf-8")
    created = re.findall(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(\w+)\s+(\w+)", text, re.M | re.I)
    assert created, name
    assert all(what.upper() == "MACRO" and macro.startswith("lc_") for what, macro in created), created
    statements = [s.strip() for s in re.sub(r"^\s*--.*$", "", text, flags=re.M).split(";") if s.strip()]
    assert len(statements) == len(created), "sql/%s: every statement must be a CREATE MACRO" % name
    named = re.findall(r"\b(lc_\w+)\(", block[0])
    assert named and set(named) <= {m for _, m in created}, (named, created)


@pytest.mark.skipif(not SPEC.is_file(), reason="spec not available (LAYA_CASES_SHARED)")
@pytest.mark.parametrize("name", SQL_FILES)
def test_spec_lines_cite_existing_rules(name):
    _, keys = header(name)
    spec = SPEC.read_text(encoding="utf-8")
    cited = _RULE.findall(keys["spec"])
    assert cited, "sql/%s '-- spec:' cites no rule (S<section>.<n>)" % name
    for section, rule in cited:
        if rule:
            assert "**S%s.%s " % (section, rule) in spec, "sql/%s cites S%s.%s, not in the spec" % (name, section, rule)
        else:
            assert re.search(r"^## %s\. " % section, spec, re.M), "sql/%s cites section S%s" % (name, section)


# ---------------------------------------------------------------------------- docs/schema.md
def _doc_table(heading: str) -> Dict[str, Tuple[str, str]]:
    """column -> (arrow type, duckdb type) from the first table under the `## <heading>` section."""
    text = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    match = re.search(r"^## %s\b.*?$(.*?)(?=^## |\Z)" % re.escape(heading), text, re.M | re.S)
    assert match, "docs/schema.md has no '## %s' section" % heading
    rows = {}
    for line in match.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`") and cells[0].endswith("`"):
            name = cells[0].strip("`")
            assert name not in rows, "docs/schema.md documents %r twice" % name
            assert cells[3], "docs/schema.md: %r has no description" % name
            rows[name] = (cells[1].strip("`"), cells[2].strip("`"))
    return rows


def _duckdb_types(arrow_schema) -> Dict[str, str]:
    import duckdb

    con = duckdb.connect()
    con.register("t", arrow_schema.empty_table())
    return {row[0]: row[1] for row in con.execute("DESCRIBE t").fetchall()}


@pytest.mark.parametrize("heading,arrow_schema", [("Decision rows", schema.DECISION_SCHEMA),
                                                  ("Runs table", schema.RUN_SCHEMA)],
                         ids=["decision-schema", "run-schema"])
def test_every_column_is_documented(heading, arrow_schema):
    """docs/schema.md lists each column once, with its Arrow and DuckDB type, in file order."""
    doc = _doc_table(heading)
    names = [f.name for f in arrow_schema]
    assert list(doc) == names, "docs/schema.md '%s' columns differ from schema.py: missing %s, extra %s" % (
        heading, sorted(set(names) - set(doc)), sorted(set(doc) - set(names)))
    duck = _duckdb_types(arrow_schema)
    for field in arrow_schema:
        arrow_type = str(field.type).replace("item: ", "")
        assert doc[field.name] == (arrow_type, duck[field.name]), (field.name, doc[field.name], arrow_type)


# ---------------------------------------------------------------------------- the catalogue keys
def test_every_metric_file_is_in_the_catalogue():
    """A sql/metrics/ file is a table (reliability) or declares its kind (docs/sql.md section 7)."""
    from laya_cases.query import catalogue

    listed = {m.path for m in catalogue.metrics()}
    for name in [n for n in SQL_FILES if n.startswith("metrics/")]:
        _, keys = header(name)
        assert name in listed or "table" in keys, "sql/%s has neither '-- kind:' nor '-- table:'" % name
        if name in listed:
            assert keys["kind"].split()[0] in catalogue.KINDS, name
            assert keys.get("family") or keys["kind"].startswith("cut"), "sql/%s has no '-- family:'" % name
