"""A local warehouse: Hive-partitioned Parquet files under one root (layout.py says where each one lives).

Readers check each run's footers first (check.py): a damaged run is left out and named. Writers stage a run
and commit it (write.py); killed writers' leftovers are found by leftovers.py and removed by `gc`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.store import progress as run_progress
from laya_cases.store import schema, verdicts
from laya_cases.store.check import prefetch, prefetch_counts, run_files, run_problem
from laya_cases.store.kind import require
from laya_cases.store.layout import (CASE_FILE, LEGACY_SLICE_SET_FILE, PARTITION, RUN_FILE, RUN_ID_OF_FILE,
                                     SLICE_SET_FILE, Layout,
                                     damaged_message, present, sql_list, unknown_run_message, validate_run_id)
from laya_cases.store.leftovers import dead_areas, orphan_partitions
from laya_cases.store.shards import debris
from laya_cases.store.write import gc, stage

if TYPE_CHECKING:
    import duckdb


def derived_views(con, baseline_only: bool) -> None:
    """`cases` and `errors` over the `decisions` view, the same on every storage; a robustness run's
    decisions are its baseline rows unless the caller asked for the variants."""
    if baseline_only:
        con.execute("ALTER VIEW decisions RENAME TO decisions_all")
        con.execute("CREATE VIEW decisions AS SELECT * FROM decisions_all "
                    "WHERE variant IS NULL OR variant = 'baseline'")
    con.execute("CREATE VIEW cases AS SELECT * FROM decisions WHERE error IS NULL AND qid IS NOT NULL")
    con.execute("CREATE VIEW errors AS SELECT * FROM decisions WHERE error IS NOT NULL")


class LocalWarehouse(Layout):
    """The runs of one local root: their files, checked, as DuckDB views; staging and commit of new ones."""

    def slice_set_files(self, run_id: str) -> List[Path]:
        """The run's slice sets files: the older layout's one file, an incomplete run's committed parts,
        else every *.parquet of its partition (part-00000.parquet, named even when missing)."""

        legacy = self.run_entry(run_id) / LEGACY_SLICE_SET_FILE
        if present(legacy):
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

    def case_frame(self, run_id: str):
        """The run's cases (records with a question and no error) as a polars LazyFrame, columns of
        docs/schema.md plus run_id: nothing is read until it is collected (api.Store.cases)."""
        import polars as pl                    # here: only the notebook's frames need polars

        self.require_run(run_id)
        files = [str(p) for p in self.case_files(run_id)]
        frame = pl.scan_parquet(files, hive_partitioning=False, missing_columns="insert", extra_columns="ignore")
        return cases_of(frame, run_id)

    def case_files(self, run_id: str) -> List[Path]:
        """The run's case files (*.parquet in its partition, by name; an incomplete run's committed parts);
        [] when the partition is missing."""

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

    def stamp(self, run_id: str) -> tuple:
        """What changes when the committed run `run_id` is replaced (gc, then the same id again): a cache
        key for readers that keep its results (the web app)."""
        st = self.run_file(run_id).stat()
        return (run_id, st.st_mtime_ns, st.st_size)

    def run_row(self, run_id: str) -> Dict[str, object]:
        """A committed run's runs-table row (run_id, kind, counts, config_json, settings_json, ...)."""
        import pyarrow.parquet as pq

        self.require_run(run_id)
        return pq.read_table(str(self.run_file(run_id))).to_pylist()[0]

    def committed_cases(self, run_id: str, columns: List[str], parts: Optional[List[str]] = None
                        ) -> Dict[str, list]:
        """Columns of an incomplete run's committed decision rows (or of the named parts of its partition,
        a shard's): what a resumed writer continues from."""
        import pyarrow.parquet as pq

        paths = self.case_files(run_id) if parts is None else [self.case_partition(run_id) / n for n in parts]
        out: Dict[str, list] = {c: [] for c in columns}
        for path in paths:
            table = pq.read_table(str(path), columns=columns)
            for c in columns:
                out[c].extend(table.column(c).to_pylist())
        return out

    def committed_slice_sets(self, run_id: str) -> List[Dict[str, object]]:
        """An incomplete run's committed slice-set rows."""
        import pyarrow.parquet as pq

        return [s for path in self.slice_set_files(run_id) for s in pq.read_table(str(path)).to_pylist()]

    def incomplete_ids(self) -> List[str]:
        """Ids of the incomplete runs, sorted."""
        return run_progress.incomplete_ids(self)

    def require_run(self, run_id: str, incomplete: bool = False) -> str:
        """The id of a committed, undamaged run (or, with `incomplete`, of an incomplete one); else a
        UsageError naming what is wrong."""
        validate_run_id(run_id)
        if not self.has_run(run_id) and self.run_state(run_id) == "incomplete":
            if not incomplete:
                raise UsageError("%s; a gate, compare, diff or plot needs a complete run"
                                 % run_progress.resume_hint(self, run_id))
        elif not self.has_run(run_id):
            raise UsageError(unknown_run_message(run_id, self.root, self.run_ids()))
        problem = run_problem(self, run_id)
        if problem:
            raise UsageError(damaged_message(run_id, problem))
        return run_id

    def connect(self, run_ids: Optional[List[str]] = None, variants: bool = False,
                runs_only: bool = False) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with views `decisions` (every record), `cases` (records that are cases),
        `errors` (failed calls and missing answers), `runs`, `slice_sets` and `inputs` (each dataset row of
        the runs, store/inputs.py; none for runs that predate it), over committed runs (all,
        or the ones named; a named incomplete run reads its committed chunks, and its runs row says
        `complete: false` in settings_json). A damaged run is left out of all and noted in `self.damaged`; naming one
        is a UsageError. Named runs (reports, diffs, plots, gates) read a robustness run's baseline
        rows only, unless `variants` (docs/robustness.md); connect() without ids reads every row. The SQL
        library's macros are the query wing's to add (query/sql.py connect). With `runs_only` the
        connection has the `runs` view alone (`laya-cases runs`: the runs are checked alike, but no view
        over their case files is bound). Runs found healthy before, whose files have not changed since,
        are not checked again (store/verdicts.py)."""
        import duckdb                          # here, not at the top: `import laya_cases` and lc.open load no engine

        require(str(self.root), "local")
        ids = []
        con = duckdb.connect()                 # reads the footers too (opening a database costs ~20-50 ms)
        wanted = self.run_ids() if run_ids is None else list(run_ids)
        known, began = self._healthy_before(wanted)
        todo = [rid for rid in wanted if rid not in known]
        if todo:
            prefetch([path for rid in todo if self.run_state(rid) for path in run_files(self, rid)], con)
            prefetch_counts(self, todo, con)
        healthy = {}
        for rid in wanted:
            problem = None if rid in known else run_problem(self, rid, con)
            if problem and run_ids is not None:
                raise UsageError(damaged_message(rid, problem))
            if problem:
                self.damaged[rid] = problem
            else:
                ids.append(rid)
                healthy[rid] = known.get(rid)
        kept = self._remember(healthy, began, every=run_ids is None)
        run_id = "'%s'" % ids[0].replace("'", "''") if len(ids) == 1 else RUN_ID_OF_FILE
        runs_dir = os.path.realpath(str(self.runs_dir))         # one resolve, not one a run
        run_files_of = {rid: os.path.join(runs_dir, PARTITION + rid, RUN_FILE) for rid in ids
                        if run_ids is None or self.has_run(rid)}
        if runs_only and run_ids is None and verdicts.cache_dir() is not None:
            self._runs_view_kept(con, run_files_of, known, kept)
            return con
        _view(con, "runs", list(run_files_of.values()), "RUN_SCHEMA",
              rows=self._incomplete_rows(ids) if run_ids is not None else None)
        if runs_only:
            return con
        case_files = [str(p.resolve()) for rid in ids for p in self.case_files(rid)]
        # one run (a report): run_id is a constant the planner folds, so its filter costs nothing
        _view(con, "decisions", case_files, "DECISION_SCHEMA", run_id=run_id, by_name=True)
        _view(con, "slice_sets", [str(p.resolve()) for rid in ids for p in self.slice_set_files(rid)],
              "SLICE_SET_SCHEMA", run_id=run_id)
        digests = sorted({d for (d,) in con.execute("SELECT DISTINCT labelled_rows_sha256 FROM runs").fetchall() if d})
        _view(con, "inputs", [str(p.resolve()) for p in map(self.inputs_file, digests) if p.is_file()], "INPUT_SCHEMA")
        derived_views(con, run_ids is not None and not variants and bool(ids) and con.execute(
            "SELECT count(*) FROM runs WHERE kind = 'robustness'").fetchone()[0] > 0)
        return con

    def _run_key(self, run_id: str) -> Optional[list]:
        """The stat key (store/verdicts.py) of the files check.run_files lists for a committed run, names
        relative to the root; None when it has no run.parquet or case file, or one cannot be looked at.
        Plain strings, not pathlib: this is most of `laya-cases runs` over a thousand runs once the
        verdicts are cached (tests/store/test_verdicts.py checks it names run_files's files)."""
        entry = os.path.join("runs", PARTITION + run_id)
        legacy = os.path.join(entry, LEGACY_SLICE_SET_FILE)
        if verdicts.present(self._abs(legacy)):
            slices = [legacy]
        else:
            part = os.path.join("slice_sets", PARTITION + run_id)
            slices = [os.path.join(part, n) for n in verdicts.parquet_names(self._abs(part))] \
                or [os.path.join(part, SLICE_SET_FILE)]
        part = os.path.join("cases", PARTITION + run_id)
        try:
            cases = [os.path.join(part, n) for n in verdicts.parquet_names(self._abs(part), missing_ok=True)]
        except OSError:
            cases = [os.path.join(part, CASE_FILE)]
        if not cases:
            return None
        names = [os.path.join(entry, RUN_FILE)] + slices + cases
        key = verdicts.file_key([self._abs(n) for n in names])
        if key is not None:
            for row, name in zip(key, names):
                row[0] = name
        return key

    def _abs(self, relative: str) -> str:
        return os.path.join(str(self.root), relative)

    def _healthy_before(self, wanted: List[str]) -> Tuple[Dict[str, list], int]:
        """({run id: key} of the runs among `wanted` found healthy by an earlier check whose files still give
        the same stat key; the time this check began, in ns)."""
        import time

        began = time.time_ns()
        if verdicts.cache_dir() is None:
            return {}, began
        self._verdicts = verdicts.load(os.path.realpath(str(self.root)))
        known = {}
        for rid in wanted:
            cached = self._verdicts.get(rid)
            if cached is not None:
                key = self._run_key(rid)
                if key is not None and key == cached:
                    known[rid] = key
        return known, began

    def _remember(self, healthy: Dict[str, Optional[list]], began: int, every: bool) -> Dict[str, list]:
        """Keep the verdicts of the healthy runs whose files are settled (verdicts.settled); `every`: the
        runs checked are all the store's, so the entries of runs no longer there are dropped."""
        if verdicts.cache_dir() is None:
            return {}
        before = getattr(self, "_verdicts", {})
        keep = {} if every else {rid: key for rid, key in before.items() if rid not in healthy}
        for rid, key in healthy.items():
            key = key or self._run_key(rid)
            if key is not None and verdicts.settled(key, began):
                keep[rid] = key
        if keep != before:
            verdicts.save(os.path.realpath(str(self.root)), keep)
        return keep

    def _runs_view_kept(self, con, files: Dict[str, str], known: Dict[str, list], kept: Dict[str, list]) -> None:
        """The `runs` view over every healthy committed run (`files`: id -> run.parquet), reading the rows of
        runs whose run.parquet is unchanged since they were kept (verdicts.snapshot_load) from that one file,
        the others from their own; then keeps the rows of every settled healthy run for the next reader."""
        import duckdb

        root = os.path.realpath(str(self.root))
        snapshot, reused = verdicts.snapshot_load(root), []
        if snapshot is not None:
            path, keys = snapshot
            reused = [rid for rid in files if rid in known and keys.get(rid) == known[rid][0]]
            try:
                if reused:
                    con.execute("CREATE TEMP TABLE _runs_kept AS SELECT * FROM read_parquet(%s, hive_partitioning = "
                                "false) WHERE list_contains($ids, run_id)" % sql_list([path]), {"ids": reused})
                    if con.execute("SELECT count(*) FROM _runs_kept").fetchone()[0] != len(reused):
                        raise duckdb.Error("the kept rows do not match their index")
            except duckdb.Error:
                con.execute("DROP TABLE IF EXISTS _runs_kept")
                reused = []
        if not reused:
            _view(con, "runs", list(files.values()), "RUN_SCHEMA")
        else:
            from_files = [path for rid, path in files.items() if rid not in set(reused)]
            more = " UNION ALL BY NAME SELECT * FROM read_parquet(%s, hive_partitioning = false)" \
                % sql_list(from_files) if from_files else ""
            con.execute("CREATE VIEW runs AS SELECT * FROM _runs_kept" + more)
        keep = {rid: kept[rid][0] for rid in files if rid in kept}
        if set(keep) != set(reused):
            ids = ", ".join("'%s'" % rid.replace("'", "''") for rid in keep)
            verdicts.snapshot_save(root, keep, lambda path: con.execute(
                "COPY (SELECT * FROM runs WHERE run_id IN (%s)) TO %s (FORMAT parquet)"
                % (ids or "NULL", sql_list([path])[1:-1])))

    def _incomplete_rows(self, ids: List[str]) -> List[Dict[str, object]]:
        """The runs rows of the incomplete runs among `ids` (progress.run_row)."""
        entries = [run_progress.read_quiet(self, rid) for rid in ids if not self.has_run(rid)]
        return [run_progress.run_row(e) for e in entries if e is not None]

    # ------------------------------------------------------------------ writing (write.py)
    def stage(self, run_id: str, resume: bool = False):
        """Write a run under _staging; commit() makes it visible; any exception discards it. With
        `resume`, take over the incomplete run `run_id` (progress.claim)."""
        require(str(self.root), "local")
        lock = self.root / ".commit.lock"
        if os.path.lexists(lock) and not os.path.isfile(lock):       # before anything is staged
            raise UsageError("%s is not a file: the warehouse's commit lock must be one (remove it)" % lock)
        return stage(self, run_id, resume)

    def gc(self) -> Dict[str, List[str]]:
        """Remove what dead writers left: {"staging": [paths], "orphans": [paths], "moved": [paths]} (moved:
        slice sets of runs committed in the older layout, now in their own tree)."""
        require(str(self.root), "local")          # never another kind's files taken for orphans
        return gc(self)

    def leftovers(self) -> Dict[str, List[str]]:
        """What `gc` would remove now (dead writers' staging areas, orphan partitions); removes nothing.
        `laya-cases runs` suggests `gc` when either list is non-empty. No pyarrow: `runs` calls this."""
        return {"staging": [str(p) for p in dead_areas(self)],
                "orphans": [str(p) for p in orphan_partitions(self) + debris(self)]}

    def leftovers_note(self) -> Optional[str]:
        """One line for `laya-cases runs` (stderr) when a writer died and left something; else None."""
        found = self.leftovers()
        if not (found["staging"] or found["orphans"]):
            return None
        return ("%d staging area(s) and %d orphan partition(s) left by writers that died in %s; "
                "`laya-cases gc` removes them" % (len(found["staging"]), len(found["orphans"]), self.root))

    def incomplete_notes(self) -> List[str]:
        """One line per incomplete run for `laya-cases runs` (stderr): how far it got, how to finish it."""
        return [run_progress.resume_hint(self, rid) for rid in self.incomplete_ids()]

    def incomplete_note(self, run_id: Optional[str]) -> Optional[str]:
        """That line for one run when it is incomplete (a report of it, a run that stopped); else None."""
        return run_progress.resume_hint(self, run_id) if run_id and self.run_state(run_id) == "incomplete" else None


def _columns(schema_name: str) -> List[Tuple[str, str]]:
    """(name, type name) of each column of the schema.py table `schema_name`, in file order."""
    if schema_name == "RUN_SCHEMA":
        return [(n, kind) for n, kind, _ in schema.RUN_COLUMNS]
    if schema_name == "INPUT_SCHEMA":
        return [(n, kind) for n, kind, _ in schema.INPUT_COLUMNS]
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
    source = "read_parquet(%s, hive_partitioning = false%s)" % (sql_list(files), options)
    if by_name:                  # columns a newer schema added read as typed nulls in older runs' files
        have = {r[0] for r in con.execute("DESCRIBE SELECT * FROM %s" % source).fetchall()}
        extra += "".join(", NULL::%s AS %s" % (schema.duck_type(kind), n) for n, kind in columns if n not in have)
    more = " UNION ALL BY NAME SELECT * FROM _rows_%s" % name if rows else ""
    con.execute("CREATE VIEW %s AS SELECT *%s FROM %s%s" % (name, extra, source, more))


def cases_of(frame, run_id: str):
    """A decision frame's cases (the `cases` view's rule: a question and no error), with run_id."""
    import polars as pl

    return (frame.filter(pl.col("error").is_null() & pl.col("qid").is_not_null())
            .with_columns(run_id=pl.lit(run_id, dtype=pl.String)))

