"""MASSIVE intent rows -> a labelled choice dataset, sampled exactly as the laya harness does (S7.1-S7.3).

Per locale: labels = the distinct labels of the locale's whole test file, sorted by code point; a
fresh `random.Random(seed)` draws, for each of the first `rows` rows in file order, keys = [gold] +
rng.sample(pool, min(n_opts - 1, |pool|)) with pool = labels without gold (sorted order kept),
then rng.shuffle(keys). The option text of a key is the key with `_` -> space, then `.` -> `: `.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from .. import UsageError

INSTRUCTIONS = "What is the user asking for in `utterance`?"
SEED = 13
N_OPTS = 20


def default_dir() -> Path:
    """$LAYA_CASES_SHARED/data/massive/test, else ../shared/data/massive/test beside the project."""
    shared = os.environ.get("LAYA_CASES_SHARED")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2].parent / "shared"
    return base / "data" / "massive" / "test"


def option_text(key: str) -> str:
    return key.replace("_", " ").replace(".", ": ")


def read_locale(path: Path) -> List[Dict[str, Any]]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, ValueError) as exc:
        raise UsageError("%s cannot be read: %s" % (path, exc)) from None


def sample_keys(labels: List[str], golds: List[str], n_opts: int = N_OPTS, seed: int = SEED) -> List[List[str]]:
    """The option keys of each row, in presented order (S7.2); one rng stream over the rows."""
    rng = random.Random(seed)
    out = []
    for gold in golds:
        pool = [label for label in labels if label != gold]
        keys = [gold] + rng.sample(pool, min(n_opts - 1, len(pool)))
        rng.shuffle(keys)
        out.append(keys)
    return out


def rows(locale: str, n_rows: Optional[int] = 100, n_opts: int = N_OPTS, seed: int = SEED,
         source: Optional[Path] = None) -> Iterator[Dict[str, Any]]:
    """Dataset rows (S1) for the first `n_rows` rows of a locale (all rows when None)."""
    path = Path(source) if source else default_dir() / ("%s.jsonl" % locale)
    if path.is_dir():
        path = path / ("%s.jsonl" % locale)
    records = read_locale(path)
    if not records:
        raise UsageError("%s contains no rows" % path)
    labels = sorted({r["label"] for r in records})
    head = records if n_rows is None else records[:n_rows]
    for record, keys in zip(head, sample_keys(labels, [r["label"] for r in head], n_opts, seed)):
        yield {"id": str(record.get("id")),
               "state": {"utterance": record["text"]},
               "questions": {"intent": {"type": "choice", "instructions": INSTRUCTIONS,
                                        "criteria": {k: option_text(k) for k in keys}}},
               "expected": {"intent": record["label"]},
               "language": locale}


def write(locale: str, out: Path, **kwargs: Any) -> int:
    """Write the dataset; the source is read completely first, so a bad locale leaves no file."""
    made = list(rows(locale, **kwargs))
    with open(out, "w", encoding="utf-8") as handle:
        for row in made:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(made)
