"""The warehouse: Hive-partitioned Parquet, one partition per run, committed atomically.

Layout (run first, so a report reads one partition and a comparison reads two; one tree per table, so
every engine can read each tree with one glob, docs/readers.md):

    <root>/cases/run_id=<id>/part-00000.parquet        decision rows (schema.DECISION_SCHEMA)
    <root>/slice_sets/run_id=<id>/part-00000.parquet   what each slice_set id of the run's cases stands for
    <root>/runs/run_id=<id>/run.parquet                one row: the run's identity and settings
    <root>/_staging/<id>.<pid>.<nonce>/                a run being written; never read
    <root>/_progress/run_id=<id>/progress.json         an incomplete run (committed in chunks, run_progress.py)

Warehouses written before slice sets had their own tree keep them in runs/run_id=<id>/slice_sets.parquet;
they are still read. A run is written entirely under `_staging`, then committed under a short file lock
by three renames: its cases, its slice sets, then its runs directory. The runs entry is the commit point:
readers only ever see cases of runs that have one, so a crash (even `kill -9`) at any moment
leaves no partial run visible. The next commit (or `gc`) removes the leftovers of dead writers.
Readers check each run's footers first (store_check.py): a damaged run is left out and named.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import duckdb

from laya_cases.core.errors import UsageError, shorten
from laya_cases.store import schema

ENV_VAR = "LAYA_CASES_WAREHOUSE"
RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_RUN_ID = re.compile(r"^%s$" % RUN_ID_PATTERN)
ROW_GROUP_ROWS = 1 << 20
PARTITION = "run_id="
CASE_FILE = "part-00000.parquet"
SLICE_SET_FILE = "part-00000.parquet"
RUN_FILE = "run.parquet"
LEGACY_SLICE_SET_FILE = "slice_sets.parquet"     # in the runs entry, before slice_sets/ had its own tree
# run_id from a file's path: the last `run_id=<id>/` directory, so nothing in the root's path counts
_RUN_ID_OF_FILE = "regexp_extract(filename, 'run_id=([^/]+)/[^/]+$', 1)"


def resolve_root(option: Optional[str]) -> Path:
    """--warehouse DIR, else $LAYA_CASES_WAREHOUSE, else ./warehouse."""
    return Path(option or os.environ.get(ENV_VAR) or "warehouse")


def validate_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or ".." in run_id:
        shown = shorten(run_id) if isinstance(run_id, str) else run_id
        raise UsageError("invalid run id %r: use 1-128 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit" % (shown,))
    return run_id


def is_run_id(text: str) -> bool:
    return bool(_RUN_ID.match(text)) and ".." not in text


def new_run_id() -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return "%s-%s" % (now, secrets.token_hex(3))


def derived_views(con, baseline_only: bool) -> None:
    """`cases` and `errors` over the `decisions` view, the same on every storage; a robustness run's
    decisions are its baseline rows unless the caller asked for the variants."""
    if baseline_only:
        con.execute("ALTER VIEW decisions RENAME TO decisions_all")
        con.execute("CREATE VIEW decisions AS SELECT * FROM decisions_all "
                    "WHERE variant IS NULL OR variant = 'baseline'")
    con.execute("CREATE VIEW cases AS SELECT * FROM decisions WHERE error IS NULL AND qid IS NOT NULL")
    con.execute("CREATE VIEW errors AS SELECT * FROM decisions WHERE error IS NOT NULL")


class Warehouse:
    def __new__(cls, root: Path | str = "warehouse"):
        """s3://..., delta+file://... name Delta Lake tables (laya_cases/objstore, docs/scale.md)."""
        from laya_cases.store.delta.url import is_url

        if cls is Warehouse and is_url(str(root)):
            from laya_cases.store.delta.warehouse import DeltaWarehouse
            return super().__new__(DeltaWarehouse)
        return super().__new__(cls)

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.cases_dir = self.root / "cases"
        self.runs_dir = self.root / "runs"
        self.slice_sets_dir = self.root / "slice_sets"
        self.staging_dir = self.root / "_staging"
        self.progress_dir = self.root / "_progress"
        self.damaged: Dict[str, str] = {}        # run id -> "<file>: <what is wrong>", from connect()

    # ------------------------------------------------------------------ layout
    def case_partition(self, run_id: str) -> Path:
        return self.cases_dir / (PARTITION + run_id)

    def run_entry(self, run_id: str) -> Path:
        return self.runs_dir / (PARTITION + run_id)

    def run_file(self, run_id: str) -> Path:
        return self.run_entry(run_id) / RUN_FILE

    def slice_set_partition(self, run_id: str) -> Path:
        return self.slice_sets_dir / (PARTITION + run_id)

    def progress_entry(self, run_id: str) -> Path:
        return self.progress_dir / (PARTITION + run_id)

    def progress_file(self, run_id: str) -> Path:
        """An incomplete run's progress entry (run_progress.py): the files its committed chunks wrote."""
        from laya_cases.store.progress import PROGRESS_FILE

        return self.progress_entry(run_id) / PROGRESS_FILE

    def slice_set_files(self, run_id: str) -> List[Path]:
        """The run's slice sets files: the older layout's one file, an incomplete run's committed parts,
        else every *.parquet of its partition (part-00000.parquet, named even when missing)."""
        from laya_cases.store import progress as run_progress

        legacy = self.run_entry(run_id) / LEGACY_SLICE_SET_FILE
        if _present(legacy):
            return [legacy]
        part = self.slice_set_partition(run_id)
        entry = None if self.has_run(run_id) else run_progress.read_quiet(self, run_id)
        if entry is not None:
            return [part / n for n in entry["slice_set_parts"]]
        try:
            names = sorted(n for n in os.listdir(part) if n.endswith(".parquet"))
        except OSError:
            names = []
        return [part / n for n in names] or [part / SLICE_SET_FILE]

    def slice_set_file(self, run_id: str) -> Path:
        """The run's slice sets: in their own tree, or beside run.parquet in a warehouse written before."""
        legacy = self.run_entry(run_id) / LEGACY_SLICE_SET_FILE
        return legacy if _present(legacy) else self.slice_set_partition(run_id) / SLICE_SET_FILE

    def case_files(self, run_id: str) -> List[Path]:
        """The run's case files (*.parquet in its partition, by name; an incomplete run's committed parts);
        [] when the partition is missing."""
        from laya_cases.store import progress as run_progress

        part = self.case_partition(run_id)
        entry = None if self.has_run(run_id) else run_progress.read_quiet(self, run_id)
        if entry is not None:
            return [part / n for n in entry["parts"]]
        try:
            names = os.listdir(part)     # not glob: the root may contain [ ] * ?
        except FileNotFoundError:
            return []
        except OSError:                  # unreadable (mode 000, a loop): named as damage by the footer check
            return [part / CASE_FILE]
        except OSError as exc:
            raise UsageError("cannot read %s: %s" % (part, exc.strerror or exc)) from None
        return [part / n for n in sorted(names) if n.endswith(".parquet")]

    # ------------------------------------------------------------------ reading
    def run_ids(self) -> List[str]:
        """Committed run ids, sorted."""
        from laya_cases.store.kind import require

        require(str(self.root), "local")
        try:
            names = os.listdir(self.runs_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise UsageError("cannot read warehouse %s: %s" % (self.root, exc.strerror or exc)) from None
        return sorted(n[len(PARTITION):] for n in names
                      if n.startswith(PARTITION) and _present(self.runs_dir / n / RUN_FILE))

    def has_run(self, run_id: str) -> bool:
        if _present(self.run_file(run_id)):
            return True
        from laya_cases.store.kind import delta_marked, require

        if delta_marked(str(self.root)):          # not found here: is this folder another kind of store?
            require(str(self.root), "local")
        return False

    def run_state(self, run_id: str) -> Optional[str]:
        """The run's state: "complete" (committed), "incomplete" (chunks committed, no runs entry yet:
        `laya-cases run --resume` continues it, `report` shows what it has) or None (no such run)."""
        if self.has_run(run_id):
            return "complete"
        return "incomplete" if self.progress_file(run_id).is_file() else None

    def incomplete_ids(self) -> List[str]:
        """Ids of the incomplete runs, sorted."""
        from laya_cases.store.progress import incomplete_ids

        return incomplete_ids(self)

    def require_run(self, run_id: str, incomplete: bool = False) -> str:
        """The id of a committed, undamaged run (or, with `incomplete`, of an incomplete one); else a
        UsageError naming what is wrong."""
        from laya_cases.store.progress import resume_hint
        from laya_cases.store.check import run_problem

        validate_run_id(run_id)
        if not self.has_run(run_id) and self.run_state(run_id) == "incomplete":
            if not incomplete:
                raise UsageError("%s; a gate, compare, diff or plot needs a complete run" % resume_hint(self, run_id))
        elif not self.has_run(run_id):
            raise UsageError(unknown_run_message(run_id, self.root, self.run_ids()))
        problem = run_problem(self, run_id)
        if problem:
            raise UsageError(damaged_message(run_id, problem))
        return run_id

    def connect(self, run_ids: Optional[List[str]] = None, variants: bool = False,
                functions: bool = True) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with views `decisions` (every record), `cases` (records that are cases),
        `errors` (failed calls and missing answers), `runs` and `slice_sets`, over committed runs (all,
        or the ones named; a named incomplete run reads its committed chunks, and its runs row says
        `complete: false` in settings_json). A damaged run is left out of all and noted in `self.damaged`; naming one
        is a UsageError. Named runs (reports, diffs, plots, gates) read a robustness run's baseline
        rows only, unless `variants` (docs/robustness.md); connect() without ids reads every row. Without
        `functions` the SQL library's macros and lc_exact_total are not defined (`runs` needs none)."""
        from laya_cases.query.sql import prepare_connection
        from laya_cases.store.check import prefetch, prefetch_counts, run_files, run_problem

        from laya_cases.store.kind import require

        require(str(self.root), "local")
        ids = []
        con = duckdb.connect()                 # reads the footers too (opening a database costs ~20-50 ms)
        wanted = self.run_ids() if run_ids is None else list(run_ids)
        prefetch([path for rid in wanted if self.run_state(rid) for path in run_files(self, rid)], con)
        prefetch_counts(self, wanted, con)
        for rid in wanted:
            problem = run_problem(self, rid, con)
            if problem and run_ids is not None:
                raise UsageError(damaged_message(rid, problem))
            if problem:
                self.damaged[rid] = problem
            else:
                ids.append(rid)
        prepare_connection(con, functions)
        case_files = [str(p.resolve()) for rid in ids for p in self.case_files(rid)]
        # one run (a report): run_id is a constant the planner folds, so its filter costs nothing
        run_id = "'%s'" % ids[0].replace("'", "''") if len(ids) == 1 else _RUN_ID_OF_FILE
        _view(con, "decisions", case_files, "DECISION_SCHEMA", run_id=run_id, by_name=True)
        _view(con, "runs", [str(self.run_file(rid).resolve()) for rid in ids if self.has_run(rid)], "RUN_SCHEMA",
              rows=self._incomplete_rows(ids) if run_ids is not None else None)
        _view(con, "slice_sets", [str(p.resolve()) for rid in ids for p in self.slice_set_files(rid)],
              "SLICE_SET_SCHEMA", run_id=run_id)
        derived_views(con, run_ids is not None and not variants and bool(ids) and con.execute(
            "SELECT count(*) FROM runs WHERE kind = 'robustness'").fetchone()[0] > 0)
        return con

    def _incomplete_rows(self, ids: List[str]) -> List[Dict[str, object]]:
        """The runs rows of the incomplete runs among `ids` (run_progress.run_row)."""
        from laya_cases.store import progress as run_progress

        entries = [run_progress.read_quiet(self, rid) for rid in ids if not self.has_run(rid)]
        return [run_progress.run_row(e) for e in entries if e is not None]

    # ------------------------------------------------------------------ writing (store_write.py)
    def stage(self, run_id: str, resume: bool = False):
        """Write a run under _staging; commit() makes it visible; any exception discards it. With
        `resume`, take over the incomplete run `run_id` (run_progress.claim)."""
        from laya_cases.store.kind import require
        from laya_cases.store.write import stage

        require(str(self.root), "local")
        lock = self.root / ".commit.lock"
        if os.path.lexists(lock) and not os.path.isfile(lock):       # before anything is staged
            raise UsageError("%s is not a file: the warehouse's commit lock must be one (remove it)" % lock)
        return stage(self, run_id, resume)

    def gc(self) -> Dict[str, List[str]]:
        """Remove what dead writers left: {"staging": [paths], "orphans": [paths], "moved": [paths]} (moved:
        slice sets of runs committed in the older layout, now in their own tree)."""
        from laya_cases.store.kind import require
        from laya_cases.store.write import gc

        require(str(self.root), "local")          # never another kind's files taken for orphans
        return gc(self)

    def leftovers(self) -> Dict[str, List[str]]:
        """What `gc` would remove now (dead writers' staging areas, orphan partitions); removes nothing.
        `laya-cases runs` suggests `gc` when either list is non-empty."""
        from laya_cases.store.leftovers import leftovers       # no pyarrow: `runs` calls this

        return leftovers(self)

    def leftovers_note(self) -> Optional[str]:
        """One line for `laya-cases runs` (stderr) when a writer died and left something; else None."""
        found = self.leftovers()
        if not (found["staging"] or found["orphans"]):
            return None
        return ("%d staging area(s) and %d orphan partition(s) left by writers that died in %s; "
                "`laya-cases gc` removes them" % (len(found["staging"]), len(found["orphans"]), self.root))

    def incomplete_notes(self) -> List[str]:
        """One line per incomplete run for `laya-cases runs` (stderr): how far it got, how to finish it."""
        from laya_cases.store.progress import resume_hint

        return [resume_hint(self, rid) for rid in self.incomplete_ids()]

    def incomplete_note(self, run_id: Optional[str]) -> Optional[str]:
        """That line for one run when it is incomplete (a report of it, a run that stopped); else None."""
        from laya_cases.store.progress import resume_hint

        return resume_hint(self, run_id) if run_id and self.run_state(run_id) == "incomplete" else None


def _present(path: Path) -> bool:
    """Whether a file is there; one that cannot even be looked at (a directory of mode 000) counts as
    there, so that the footer check names it as damage instead of every reader failing."""
    try:
        return path.is_file()
    except OSError:
        return True


def unknown_run_message(run_id: str, root, known: List[str]) -> str:
    """The one "unknown run id" line: the closest ids when one is near (a typo: 'dmeo' -> 'demo'), else up
    to five known ids and how many more `laya-cases runs` lists."""
    import difflib

    if not known:
        return "unknown run id %r in warehouse %s; the warehouse is empty" % (run_id, root)
    close = difflib.get_close_matches(run_id, known, n=3, cutoff=0.6)
    if close:
        hint = "did you mean %s?" % " or ".join(repr(c) for c in close)
    else:
        more = len(known) - 5
        hint = "known runs: %s%s" % (", ".join(known[-5:]), " and %d more (laya-cases runs)" % more if more > 0 else "")
    return "unknown run id %r in warehouse %s; %s" % (run_id, root, hint)


def damaged_message(run_id: str, problem: str) -> str:
    return "run %r is damaged: %s (see `laya-cases check`)" % (run_id, problem)


def _columns(schema_name: str) -> List[Tuple[str, str]]:
    """(name, type name) of each column of the schema.py table `schema_name`, in file order."""
    if schema_name == "RUN_SCHEMA":
        return [(n, kind) for n, kind, _ in schema.RUN_COLUMNS]
    kinds = {n: kind for n, kind, _ in schema.COLUMNS}
    return [(n, kinds[n]) for n in (schema.SLICE_SET_COLUMNS if schema_name == "SLICE_SET_SCHEMA" else kinds)]


def _view(con: duckdb.DuckDBPyConnection, name: str, files: List[str], schema_name: str, *,
          run_id: Optional[str] = None, by_name: bool = False, rows: Optional[List[Dict[str, object]]] = None) -> None:
    """CREATE VIEW name over exactly these files: each path is a literal (glob characters escaped), and
    run_id comes from the file's own partition directory, never from `key=value` parts of the root.
    `rows` (the runs rows of incomplete runs) are added to the files' rows. `schema_name` names the
    table's schema in schema.py; pyarrow is imported only for `rows`."""
    columns = _columns(schema_name)
    if rows:
        import pyarrow as pa

        con.register("_rows_" + name, pa.Table.from_pylist(rows, schema=getattr(schema, schema_name)))
        if not files:
            con.execute("CREATE VIEW %s AS SELECT * FROM _rows_%s" % (name, name))
            return
    if not files:                # no rows, every column typed as a file of the schema reads
        typed = ['NULL::%s AS "%s"' % (schema.duck_type(kind), n) for n, kind in columns]
        typed += ["NULL::VARCHAR AS run_id"] if run_id else []
        con.execute("CREATE VIEW %s AS SELECT %s WHERE false" % (name, ", ".join(typed)))
        return
    extra = ", %s AS run_id" % run_id if run_id else ""
    options = ", union_by_name = true" if by_name else ""
    source = "read_parquet(%s, hive_partitioning = false%s)" % (_sql_list(files), options)
    if by_name:                  # columns a newer schema added read as typed nulls in older runs' files
        have = {r[0] for r in con.execute("DESCRIBE SELECT * FROM %s" % source).fetchall()}
        extra += "".join(", NULL::%s AS %s" % (schema.duck_type(kind), n) for n, kind in columns if n not in have)
    more = " UNION ALL BY NAME SELECT * FROM _rows_%s" % name if rows else ""
    con.execute("CREATE VIEW %s AS SELECT *%s FROM %s%s" % (name, extra, source, more))


def _glob_literal(path: str) -> str:
    """DuckDB expands * ? [ in every path it reads; a one-character class matches the character itself."""
    return "".join({"[": "[[]", "*": "[*]", "?": "[?]"}.get(c, c) for c in path)


def _sql_list(paths: List[str]) -> str:
    for path in paths:              # DuckDB reads `\` as a separator once a path has a glob character
        if "\\" in path and any(c in path for c in "[*?"):
            raise UsageError("cannot read %s: a path with a backslash and one of [ * ? cannot be given to "
                             "DuckDB as a literal; rename the directory" % path)
    return "[%s]" % ", ".join("'%s'" % _glob_literal(p).replace("'", "''") for p in paths)
