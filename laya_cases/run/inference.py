"""The pieces of a runner call (run/job.py makes the calls): chunks of rows as the reference groups them
(S6.12), the confidence gate (S6.11), the facts a result may carry, the call counts, a fatal crash."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

from laya_cases.core import dataset as D
from laya_cases.core.answers import AnswerError, gate_confidence
from laya_cases.store.schema import DECISION_SCHEMA

#: Decision columns a runner may fill through `result["facts"][qid]`; other fact keys are not stored.
FACT_COLUMNS = ("raw_text", "parsed", "relevance_score", "temperature", "temperature_bucket",
                "shortlist_status", "variant", "parent_case_id", "logits", "temperature_clamped",
                "temperature_unclamped", "slot_order", "presented_labels", "shortlist_labels",
                "shortlist_scores", "no_score", "native_score", "truncated", "state_json")


assert all(DECISION_SCHEMA.get_field_index(c) >= 0 for c in FACT_COLUMNS)


class RunnerCrash(Exception):
    """A runner call raised under `--on-error fail` (S6.7: exit 1, or --crash-exit-code N, S9.7)."""

    def __init__(self, row_index: int, exc: BaseException):
        super().__init__("runner failed on row %d: %s: %s" % (row_index, type(exc).__name__, exc))
        self.row_index, self.exc = row_index, exc
        self.run_id: Optional[str] = None        # set by run.execute


def apply_gate(answers: Dict[str, Any], threshold: float) -> None:
    """S6.11 per answer: passed / abstained (+ low_confidence) / unevaluated, and the threshold used."""
    for answer in answers.values():
        if not isinstance(answer, dict):
            continue
        try:
            conf = gate_confidence(answer)
        except AnswerError:
            conf = None
        if conf is not None and conf < threshold:
            answer["low_confidence"] = True
            answer["abstention"] = "abstained"
        else:
            answer.pop("low_confidence", None)
            answer["abstention"] = "unevaluated" if conf is None else "passed"
        answer["abstention_threshold"] = float(threshold)


def answered_model(result: Any, runner_model: Any = None) -> Any:
    """S4.3 fallback: the routed checkpoint, else the result's top-level `model`, else `runner_model`.

    The reference's runners name themselves in every result (a bare Agent says `laya-rl-agent`), so
    its `model` slice is never empty; ours mostly do not, and the runner's own model stands in."""
    result = result if isinstance(result, dict) else {}
    routing = result.get("routing")
    if isinstance(routing, dict) and isinstance(routing.get("model"), str) and routing["model"]:
        return routing["model"]
    return result["model"] if result.get("model") is not None else runner_model


def signature(question_set: Dict[str, Any]) -> str:
    """S6.12 positional form: top-level qids sorted, inner key order kept."""
    return json.dumps(dict(sorted((question_set or {}).items())), sort_keys=False, default=str)


def chunks(rows: List[D.Row], models: List[Any], batch_size: Optional[int], batching: bool,
           sigs: Optional[List[str]] = None) -> Iterator[List[int]]:
    """Row positions of each call, in dataset order (S6.12); `sigs` are the rows' signatures."""
    n = batch_size if (batching and batch_size is not None and batch_size > 1) else 1
    if n > 1 and sigs is None:
        sigs = [signature(r.questions) for r in rows]
    i = 0
    while i < len(rows):
        j = i + 1
        while n > 1 and j < len(rows) and j - i < n and \
                models[j] == models[i] and sigs[j] == sigs[i]:
            j += 1
        yield list(range(i, j))
        i = j


def facts_of(result: Dict[str, Any], qid: str) -> Dict[str, Any]:
    facts = result.get("facts") if isinstance(result, dict) else None
    mine = facts.get(qid) if isinstance(facts, dict) else None
    return {k: v for k, v in mine.items() if k in FACT_COLUMNS} if isinstance(mine, dict) else {}


@dataclass
class Calls:
    """How the rows were grouped into runner calls (S6.12), as `config.timing` reports it."""

    chunks: int = 0
    rows_grouped: int = 0
    rows_alone: int = 0
    max_chunk: int = 0

    def add(self, size: int) -> int:
        """Count one call of `size` rows; returns its call id."""
        self.chunks += 1
        if size > 1:
            self.rows_grouped += size
        else:
            self.rows_alone += 1
        self.max_chunk = max(self.max_chunk, size)
        return self.chunks - 1

    def restore(self, timing: Dict[str, Any]) -> None:
        """Continue from a committed run's `config.timing` counts (a resumed run or shard)."""
        self.chunks, self.rows_grouped = int(timing.get("chunks") or 0), int(timing.get("rows_grouped") or 0)
        self.rows_alone, self.max_chunk = int(timing.get("rows_alone") or 0), int(timing.get("max_chunk") or 0)
