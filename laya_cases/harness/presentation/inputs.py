"""The fixed inputs of the presentation checks (S7.9-S7.11) as dataset rows, from the states file."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.core import bundled
from laya_cases.core.errors import shorten
from laya_cases.core.dataset import Row
from laya_cases.harness.presentation.constants import FIRST_SLOT, LEVELS, SLOT0, SLOT0_SIZES, SLOT0_TEXTS

STATES = bundled.path("presentation_states.json")


def questions(instructions: str) -> Dict[str, Dict[str, Any]]:
    """The 12 score questions every state is asked (6 identical-option configs, 6 level orders)."""
    out: Dict[str, Dict[str, Any]] = {}
    for text in SLOT0_TEXTS:
        for k in SLOT0_SIZES:
            out["%s/%s/%d" % (SLOT0, text, k)] = {"type": "score", "instructions": instructions,
                                                  "criteria": [text] * k}
    for order in itertools.permutations(range(len(LEVELS))):
        out["%s/%s" % (FIRST_SLOT, "".join(map(str, order)))] = {
            "type": "score", "instructions": instructions, "criteria": [LEVELS[i] for i in order]}
    return out


def load(path: Optional[Path] = None) -> Tuple[str, List[Row]]:
    """(the states file's path, one label-free Row per state with the 12 questions)."""
    path = Path(path) if path is not None else STATES
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:       # RecursionError: nested too deep to read
        raise UsageError("%s cannot be read: %s" % (path, shorten(str(exc), 200))) from None
    states = doc.get("states") if isinstance(doc, dict) else None
    instructions = doc.get("instructions") if isinstance(doc, dict) else None
    if not isinstance(states, list) or len(states) < 2 or not isinstance(instructions, str) or not instructions:
        raise UsageError("%s: needs `instructions` (a string) and `states` (a list of at least 2)" % path)
    qs = questions(instructions)
    rows = [Row(index=i, line_no=i + 1, raw={"state": state, "questions": qs, "expected": {q: None for q in qs}})
            for i, state in enumerate(states)]
    return str(path), rows
