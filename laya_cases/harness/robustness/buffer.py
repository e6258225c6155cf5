"""Decision rows of a robustness run: the canonical case, plus which presentation produced it (S7.13).

A variant row is recorded against the *canonical* dataset row, so `options`, `option_texts`,
`expected_json`, `probabilities`, `predicted` and `correct` are in canonical terms; `answer_json` keeps
the runner's answer to the presented question as it came, and `slot_order` / `presented_labels` say how
to read it. Baseline cases keep the case id a plain run of the dataset gives them (the baseline pass
runs first over every row); a variant's case id is `<baseline case id>/<kind>`.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

from laya_cases.core.dataset import Row
from laya_cases.record.decisions import DecisionBuffer


def answer_text(answer: Any) -> str:
    """An answer as `answer_json` stores it (the decision rows' JSON form)."""
    return json.dumps(answer, ensure_ascii=False, separators=(", ", ": "), default=str)


def variant_case_id(parent: str, kind: str) -> str:
    return "%s/%s" % (parent, kind)


class VariantBuffer(DecisionBuffer):
    """A DecisionBuffer that remembers the last case id it numbered and takes extra columns on errors."""

    last_case_id: Optional[str] = None

    def _case_id(self, row: Row, qid: str, body_json: Optional[str] = None) -> str:
        self.last_case_id = super()._case_id(row, qid, body_json)
        return self.last_case_id

    def add_variant_error(self, row: Row, error: str, *, qid: str, qid_pos: int, model: Any,
                          call: Dict[str, Any], extra: Dict[str, Any]) -> None:
        """An error record (failed call, missing answer, S7.14 vector) carrying the variant columns; a
        baseline record is numbered like a plain run's, a variant one takes `extra['case_id']`."""
        values = self._row_facts(row, model, call)
        values.update({"qid": qid, "qid_pos": qid_pos, "error": error})
        values.update(extra)
        if values.get("case_id") is None:
            values["case_id"] = self._case_id(row, qid)
        self._append(values)
        self.n_errors += 1
