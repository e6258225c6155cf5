"""A small labelled dataset and two answer sets that differ in known cases (gates, compare, diff tests).

Row i (0-based): language `de` when i % 3 == 0 else `en`; tags ["vip"] on even rows; questions
`intent` (choice, gold one of refund/cancel/other) and `spam` (noul). In the base answers `intent`
is wrong when i % 5 == 0 and `spam` is wrong when i % 7 == 0. `flips` is a set of (qid, i) whose
correctness is inverted; `relabel` changes the gold intent of the given rows; `drop` leaves rows
out and `extra` appends rows past n.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Dict, Iterable, List, Set, Tuple

LABELS = ("refund", "cancel", "other")
QUESTIONS = {"intent": {"type": "choice", "instructions": "What does the customer want?",
                        "criteria": list(LABELS)},
             "spam": {"type": "noul", "instructions": "Is this message spam?"}}


def base_correct(qid: str, i: int) -> bool:
    return i % 5 != 0 if qid == "intent" else i % 7 != 0


def rows(n: int = 40, *, flips: Iterable[Tuple[str, int]] = (), relabel: Iterable[int] = (),
         drop: Iterable[int] = (), extra: int = 0) -> List[Dict[str, Any]]:
    flips: Set[Tuple[str, int]] = set(flips)
    relabel, drop = set(relabel), set(drop)
    rng = random.Random(7)
    out = []
    for i in range(n + extra):
        conf = round(0.5 + rng.random() / 2, 4)
        if i in drop:
            continue
        gold = LABELS[i % 3]
        right = base_correct("intent", i) != (("intent", i) in flips)
        pred = gold if right else LABELS[(i + 1) % 3]
        spam = bool(i % 2)
        sright = base_correct("spam", i) != (("spam", i) in flips)
        p_true = (0.8 if spam else 0.2) if sright else (0.3 if spam else 0.7)
        expected = {"intent": LABELS[(i + 2) % 3] if i in relabel else gold, "spam": spam}
        row = {"state": "message %d" % i, "questions": QUESTIONS, "expected": expected,
               "language": "de" if i % 3 == 0 else "en"}
        if i % 2 == 0:
            row["tags"] = ["vip"]
        row["answers"] = {"intent": {"type": "choice", "choice": pred, "answer_confidence": conf},
                          "spam": {"type": "noul", "noul": p_true, "answer_confidence": max(p_true, 1 - p_true)}}
        out.append(row)
    return out


def write(path: Path, rows_: List[Dict[str, Any]], *, answers: bool = True) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows_:
            if not answers:
                row = {k: v for k, v in row.items() if k != "answers"}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
