"""A BANKING77 shortlist dataset (77 intents, one choice question per row) from the stored test split.

Source: `<LAYA_CASES_SHARED or ../shared>/data/banking77/` (`test.jsonl`: id, language, text, label;
`categories.json`: the official label order; see its SOURCE.md). Each row: state = the text, one
question `intent` whose criteria are the 77 labels in the official order, each described by the label
with `_` -> space (so the option text MiniLM embeds reads `card_arrival: card arrival`), expected =
the gold label, `language` and `item_id` from the source. `every` keeps every n-th row (the split is
sorted by intent, 40 rows each: every=40 gives one row per intent).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError

INSTRUCTIONS = "What is the customer asking for?"


def default_dir() -> Path:
    shared = os.environ.get("LAYA_CASES_SHARED")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3].parent / "shared"
    return base / "data" / "banking77"


def rows(source: Optional[Path] = None, n_rows: Optional[int] = None, every: int = 1) -> List[Dict[str, Any]]:
    folder = Path(source) if source is not None else default_dir()
    try:
        labels = json.loads((folder / "categories.json").read_text(encoding="utf-8"))
        with open(folder / "test.jsonl", encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle if line.strip()]
    except (OSError, ValueError) as exc:
        raise UsageError("BANKING77 cannot be read from %s: %s" % (folder, exc)) from None
    criteria = {label: label.replace("_", " ") for label in labels}
    picked = records[::max(1, every)][:n_rows]
    return [{"state": r["text"], "language": r.get("language", "en"), "item_id": r["id"],
             "questions": {"intent": {"type": "choice", "instructions": INSTRUCTIONS, "criteria": criteria}},
             "expected": {"intent": r["label"]}} for r in picked]


def write(out: Path, **kwargs: Any) -> int:
    made = rows(**kwargs)
    try:
        with open(out, "w", encoding="utf-8") as handle:
            for row in made:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError("cannot write %r: %s" % (str(out), exc)) from None
    return len(made)
