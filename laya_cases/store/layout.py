"""The warehouse: Hive-partitioned Parquet, one partition per run, committed atomically.

Layout (run first, so a report reads one partition and a comparison reads two; one tree per table, so
every engine can read each tree with one glob, docs/readers.md):

    <root>/cases/run_id=<id>/part-00000.parquet        decision rows (schema.DECISION_SCHEMA)
    <root>/slice_sets/run_id=<id>/part-00000.parquet   what each slice_set id of the run's cases stands for
    <root>/runs/run_id=<id>/run.parquet                one row: the run's identity and settings
    <root>/_staging/<id>.<pid>.<nonce>/                a run being written; never read
    <root>/_progress/run_id=<id>/progress.json         an incomplete run (committed in chunks, store/progress.py)
    <root>/relabels/relabels.parquet                   accepted gold-label corrections (store/relabels.py)
    <root>/inputs/<labelled_rows_sha256>.parquet       each dataset row's input, once per digest (store/inputs.py)

Warehouses written before slice sets had their own tree keep them in runs/run_id=<id>/slice_sets.parquet;
they are still read. A run is written entirely under `_staging`, then committed under a short file lock
by three renames: its cases, its slice sets, then its runs directory. The runs entry is the commit point:
readers only ever see cases of runs that have one, so a crash (even `kill -9`) at any moment
leaves no partial run visible. The next commit (or `gc`) removes the leftovers of dead writers.
Readers check each run's footers first (store/check.py): a damaged run is left out and named.
"""
from __future__ import annotations

import datetime as _dt
import difflib
import os
import re
import secrets
from pathlib import Path
from typing import Dict, List, Optional

from laya_cases.core.errors import UsageError, shorten
from laya_cases.store.kind import delta_marked, require

ENV_VAR = "LAYA_CASES_WAREHOUSE"
RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_RUN_ID = re.compile(r"^%s$" % RUN_ID_PATTERN)
ROW_GROUP_ROWS = 1 << 20
PARTITION = "run_id="
CASE_FILE = "part-00000.parquet"
SLICE_SET_FILE = "part-00000.parquet"
RUN_FILE = "run.parquet"
PROGRESS_FILE = "progress.json"          # an incomplete run's entry (progress.py)
LEGACY_SLICE_SET_FILE = "slice_sets.parquet"     # in the runs entry, before slice_sets/ had its own tree
# run_id from a file's path: the last `run_id=<id>/` directory, so nothing in the root's path counts
RUN_ID_OF_FILE = "regexp_extract(filename, 'run_id=([^/]+)/[^/]+$', 1)"


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


def present(path: Path) -> bool:
    """Whether a file is there; one that cannot even be looked at (a directory of mode 000) counts as
    there, so that the footer check names it as damage instead of every reader failing."""
    try:
        return path.is_file()
    except OSError:
        return True


def unknown_run_message(run_id: str, root, known: List[str]) -> str:
    """The one "unknown run id" line: the closest ids when one is near (a typo: 'dmeo' -> 'demo'), else up
    to five known ids and how many more `laya-cases runs` lists."""
    if not known:
        return "unknown run id %r in warehouse %s; the warehouse is empty" % (run_id, root)
    close = difflib.get_close_matches(run_id, known, n=3, cutoff=0.6)
    if close:
        hint = "did you mean %s?" % " or ".join(repr(c) for c in close)
    else:
        more = len(known) - 5
        hint = "known runs: %s%s" % (", ".join(known[-5:]), " and %d more (laya-cases runs)" % more if more > 0 else "")
    return "unknown run id %r in warehouse %s; %s" % (run_id, root, hint)


def taken(run_id: str, root, why: str = "") -> UsageError:
    """The one refusal of a run id that is taken (every writer: run, harnesses, ingest, imports, both
    stores); `why` says more (an incomplete run, another writer first)."""
    return UsageError("run id %s already exists in warehouse %s%s" % (shorten(repr(run_id)), root, why))


#: `taken`'s `why` for the id of an incomplete run (a new writer may not reuse it)
INCOMPLETE = " (an incomplete run; `laya-cases run ... --resume %s` continues it)"


def check_free(wh, run_id: str) -> None:
    """A new run's id names no committed run of `wh` (a Warehouse, local or Delta)."""
    if wh.has_run(run_id):
        raise taken(run_id, wh.root)


def damaged_message(run_id: str, problem: str) -> str:
    return "run %r is damaged: %s (see `laya-cases check`)" % (run_id, problem)


def glob_literal(path: str) -> str:
    """DuckDB expands * ? [ in every path it reads; a one-character class matches the character itself."""
    return "".join({"[": "[[]", "*": "[*]", "?": "[?]"}.get(c, c) for c in path)


def sql_list(paths: List[str]) -> str:
    for path in paths:              # DuckDB reads `\` as a separator once a path has a glob character
        if "\\" in path and any(c in path for c in "[*?"):
            raise UsageError("cannot read %s: a path with a backslash and one of [ * ? cannot be given to "
                             "DuckDB as a literal; rename the directory" % path)
    return "[%s]" % ", ".join("'%s'" % glob_literal(p).replace("'", "''") for p in paths)


class Layout:
    """Where each file of a local store lives, and which runs it holds (no file is opened but listed)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.cases_dir = self.root / "cases"
        self.runs_dir = self.root / "runs"
        self.slice_sets_dir = self.root / "slice_sets"
        self.staging_dir = self.root / "_staging"
        self.progress_dir = self.root / "_progress"
        self.relabels_file = self.root / "relabels" / "relabels.parquet"      # store/relabels.py
        self.inputs_dir = self.root / "inputs"                                 # store/inputs.py
        self.damaged: Dict[str, str] = {}        # run id -> "<file>: <what is wrong>", from connect()

    def inputs_file(self, digest: str) -> Path:
        return self.inputs_dir / ("%s.parquet" % digest)

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
        """An incomplete run's progress entry (store/progress.py): the files its committed chunks wrote."""
        return self.progress_entry(run_id) / PROGRESS_FILE

    def slice_set_file(self, run_id: str) -> Path:
        """The run's slice sets: in their own tree, or beside run.parquet in a warehouse written before."""
        legacy = self.run_entry(run_id) / LEGACY_SLICE_SET_FILE
        return legacy if present(legacy) else self.slice_set_partition(run_id) / SLICE_SET_FILE

    def run_ids(self) -> List[str]:
        """Committed run ids, sorted."""
        require(str(self.root), "local")
        try:
            names = os.listdir(self.runs_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise UsageError("cannot read warehouse %s: %s" % (self.root, exc.strerror or exc)) from None
        return sorted(n[len(PARTITION):] for n in names
                      if n.startswith(PARTITION) and present(self.runs_dir / n / RUN_FILE))

    def has_run(self, run_id: str) -> bool:
        if present(self.run_file(run_id)):
            return True
        if delta_marked(str(self.root)):          # not found here: is this folder another kind of store?
            require(str(self.root), "local")
        return False

    def run_state(self, run_id: str) -> Optional[str]:
        """The run's state: "complete" (committed), "incomplete" (chunks committed, no runs entry yet:
        `laya-cases run --resume` continues it, `report` shows what it has) or None (no such run)."""
        if self.has_run(run_id):
            return "complete"
        return "incomplete" if self.progress_file(run_id).is_file() else None
