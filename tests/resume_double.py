"""A scripted runner and datasets for the resume tests (tests/run/test_resume.py), also run as a subprocess.

`ResumeDouble` answers each state deterministically (label and confidence from a digest of the
state), can append one line per call to a log file (calls counted across processes), stop at its
N-th call until it is killed (tests/handshake.py: a kill midway), and raise on its N-th call (a crash).

    python tests/resume_double.py ARGS...    `laya-cases ARGS...` with the double registered
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import handshake  # noqa: E402
from doubles import FakeClock, choice_answer  # noqa: E402
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo  # noqa: E402

LABELS = ["refund", "cancel", "other"]
LOG_ENV = "RESUME_DOUBLE_LOG"            # file: one line per call (its states), appended


class ResumeDouble(Runner):
    name = "resume-double"
    capabilities = Capabilities(sort_by_length=True)

    def __init__(self, model: Optional[str] = None, clock: Optional[FakeClock] = None, fail_at: Optional[int] = None,
                 **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="resume-double", revision="1" * 40,
                               settings={"decision_rule": "digest of the state"})
        self.clock, self.fail_at, self.calls = clock, fail_at, 0
        self.log = os.environ.get(LOG_ENV)

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        self.calls += 1
        handshake.hold(self.calls)
        if self.fail_at is not None and self.calls == self.fail_at:
            raise RuntimeError("scripted crash on call %d" % self.calls)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(states) + "\n")
        if self.clock is not None:
            self.clock.advance_ms(10.0 + 2.0 * len(states))
        return [self._one(str(s), questions) for s in states]

    def _one(self, state: str, questions: Dict[str, Any]) -> Dict[str, Any]:
        if "BOOM" in state:
            raise RuntimeError("runner exploded")
        if "SILENT" in state:
            return {"answers": {}}
        digest = hashlib.sha256(state.encode("utf-8")).digest()
        answers = {}
        for qid, body in questions.items():
            labels = [str(l) for l in body["criteria"]]
            answers[qid] = choice_answer(labels[digest[0] % len(labels)], 0.34 + (digest[1] % 60) / 100.0, labels)
        return {"answers": answers}


def write_dataset(path: Path, n_rows: int, *, special: bool = True) -> Path:
    """n_rows rows over three languages, with repeated states (case ids `#n`), rows without `expected`,
    a second question set, and (with `special`) a row that fails (BOOM) and one without an answer (SILENT)."""
    body = {"type": "choice", "instructions": "What does the customer want?", "criteria": LABELS}
    rows = []
    for i in range(n_rows):
        state = "same words" if i % 9 == 4 else "row %d says %s" % (i, ["money", "stop", "hello"][i % 3])
        if special and i == n_rows // 3:
            state = "BOOM"
        if special and i == n_rows // 2:
            state = "SILENT"
        questions = {"intent": body} if i % 11 != 7 else {"intent": body, "tone": dict(body, criteria=["calm", "angry"])}
        expected = {} if i % 13 == 12 else {q: (LABELS[i % 3] if q == "intent" else "calm") for q in questions}
        rows.append({"state": state, "questions": questions, "expected": expected,
                     "language": ["en", "de", "fr"][i % 3], "tags": ["t%d" % (i % 2)]})
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def main() -> None:
    from laya_cases.runners import registry
    from laya_cases_cli.app import main as cli_main

    registry.register(ResumeDouble.name, ResumeDouble)
    sys.argv = ["laya-cases"] + sys.argv[1:]
    cli_main()


if __name__ == "__main__":
    main()
