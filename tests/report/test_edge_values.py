"""Edge values the reference does not survive, decided once (issue 7, 7b/7c; docs/report.md)."""
from __future__ import annotations

import math

from report_path import Store

BODY = {"q": {"type": "choice", "instructions": "pick", "criteria": ["a", "b"]}}


def _rows(confidences):
    return [{"state": "s%d" % i, "questions": BODY, "expected": {"q": "a"},
             "answers": {"q": {"type": "choice", "choice": "a", "answer_confidence": c}}}
            for i, c in enumerate(confidences)]


def test_two_huge_confidences_average_to_themselves(tmp_path):
    """The sum of two 1e308 overflows binary64; their exact mean does not (7b)."""
    doc = Store(tmp_path).report(_rows([1e308, 1e308]))
    assert doc["overall"]["mean_confidence"] == 1e308


def test_three_near_max_confidences_average_to_themselves(tmp_path):
    doc = Store(tmp_path).report(_rows([1.7e308, 1.7e308, 1.7e308]))
    assert doc["overall"]["mean_confidence"] == 1.7e308
    assert doc["extensions"]["overall"]["mean_confidence"]["n"] == 3


def test_plus_and_minus_infinity_in_one_group_publish_nan(tmp_path):
    """The reference crashes here; we publish NaN, like any NaN evaluator mean (7c)."""
    doc = Store(tmp_path).report(_rows([math.inf, -math.inf, 0.5]))
    assert math.isnan(doc["overall"]["mean_confidence"])
    assert doc["extensions"]["overall"]["mean_confidence"]["n"] == 3
