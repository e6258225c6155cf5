"""Each dataset row's input, kept once per labelled-rows digest: <root>/inputs/<digest>.parquet.

A run's decisions hold a digest of the state in case_id, not the state; this file holds the row itself
(its state, questions, expected, language, tags and model: the compact JSON line the digest hashes,
core/identity.labelled_line), so the case page, `sql` (the `inputs` view) and the API can show what the
model read. The content is a function of the digest alone, so every run of the dataset shares one file:
the first commit writes it, later ones find it there.

Written by the commit before the run becomes visible: staged, fsynced, then renamed into place (an
atomic rename of a whole file; two writers of one digest rename equal bytes). A crash before the run's
own commit point can leave a file no run names yet; it is still the digest's exact content, so the next
run of that dataset simply finds it. Runs committed before this file existed, shard runs and stores on
Delta tables have none: readers say the input is not stored.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Optional

from laya_cases.store.files import fsync_path, write_table


def place(wh: Any, staging: Path, digest: Optional[str], make: Optional[Callable[[], Any]]) -> Optional[Path]:
    """Write the table `make()` builds (schema.INPUT_SCHEMA rows) as the digest's inputs file unless it is
    there already (then nothing is built); returns the file (None when there is nothing to keep)."""
    if not digest or make is None:
        return None
    target = wh.inputs_file(digest)
    if target.exists():
        return target
    table = make()
    if table is None or table.num_rows == 0:
        return None
    staged = staging / ("inputs-%s.parquet" % digest)
    write_table(table, staged)
    fsync_path(staged)
    if not target.parent.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        fsync_path(wh.root)
    os.rename(staged, target)
    fsync_path(target.parent)
    return target
