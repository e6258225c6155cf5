"""MASSIVE intent rows -> a labelled choice dataset, sampled exactly as the laya harness does (S7.1-S7.3).

Per locale: labels = the distinct labels of the locale's whole test file, sorted by code point; a
fresh `random.Random(seed)` draws, for each of the first `rows` rows in file order, keys = [gold] +
rng.sample(pool, min(n_opts - 1, |pool|)) with pool = labels without gold (sorted order kept),
then rng.shuffle(keys). The option text of a key is the key with `_` -> space, then `.` -> `: `.
With n_opts = 0 nothing is drawn: every row offers all the labels in sorted order, so every row of a
locale asks the same question and a runner can take many rows in one call (`run --batch-size`).

Rows are read through `laya_cases.harness.massive.data` (Hugging Face `datasets`: a local folder or the Hub);
each dataset row carries `language` (the short code, en, de, zh-CN) and `item_id` (the MASSIVE id,
the same utterance in every locale), so cross-lingual SQL can join on it.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.harness.massive import data

INSTRUCTIONS = "What is the user asking for in `utterance`?"
SEED = 13
N_OPTS = 20


def option_text(key: str) -> str:
    return key.replace("_", " ").replace(".", ": ")


def read_locale(path: Path) -> List[Dict[str, Any]]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, ValueError) as exc:
        raise UsageError("%s cannot be read: %s" % (path, exc)) from None


def sample_keys(labels: List[str], golds: List[str], n_opts: int = N_OPTS, seed: int = SEED) -> List[List[str]]:
    """The option keys of each row, in presented order (S7.2); one rng stream over the rows.
    n_opts = 0: every label, sorted, on every row (no draw)."""
    if n_opts == 0:
        return [list(labels) for _ in golds]
    rng = random.Random(seed)
    out = []
    for gold in golds:
        pool = [label for label in labels if label != gold]
        keys = [gold] + rng.sample(pool, min(n_opts - 1, len(pool)))
        rng.shuffle(keys)
        out.append(keys)
    return out


def sample_rows(records: List[Dict[str, Any]], code: str, n_rows: Optional[int] = 100, n_opts: int = N_OPTS,
                seed: int = SEED, skip: int = 0) -> List[Dict[str, Any]]:
    """Dataset rows (S1) for the first `n_rows` records (all when None) of one language's whole split,
    after the first `skip`: those are still sampled, so row 501 gets the options a 1000-row run gives it."""
    labels = sorted({r["label"] for r in records})
    head = records if n_rows is None else records[:skip + n_rows]
    return [{"id": str(record.get("id")), "item_id": str(record.get("id")),
             "state": {"utterance": record["text"]},
             "questions": {"intent": {"type": "choice", "instructions": INSTRUCTIONS,
                                      "criteria": {k: option_text(k) for k in keys}}},
             "expected": {"intent": record["label"]},
             "language": code}
            for record, keys in list(zip(head, sample_keys(labels, [r["label"] for r in head], n_opts, seed)))[skip:]]


def rows(locale: str, n_rows: Optional[int] = 100, n_opts: int = N_OPTS, seed: int = SEED,
         source: Optional[Path] = None, skip: int = 0) -> Iterator[Dict[str, Any]]:
    """Dataset rows for a language (code or locale) from `source` (folder or file), else the Hub."""
    code = data.code_of(locale)
    yield from sample_rows(data.load(code, source).records, code, n_rows, n_opts, seed, skip)


def write(locale: str, out: Path, **kwargs: Any) -> int:
    """Write the dataset; the source is read completely first, so a bad locale leaves no file."""
    made = list(rows(locale, **kwargs))
    with open(out, "w", encoding="utf-8") as handle:
        for row in made:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(made)
