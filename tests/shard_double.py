"""A runner for the sharded-run tests (tests/run/test_shard.py), also run as a subprocess.

`ShardDouble` answers the bundled dataset (data/support.jsonl) with the recorded answers of
data/support.answers.jsonl (a state it has no recording for gets a choice / noul / score answer
from a digest of the state), runs on cpu or cuda (nothing changes but the recorded device), can
take turns with other processes call by call (tests/handshake.py: shards whose calls interleave)
and raise on a state containing "BOOM".

    python tests/shard_double.py ARGS...    `laya-cases ARGS...` with the double registered
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
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOG_ENV = "SHARD_DOUBLE_LOG"            # file: one line per call (pid and states), appended


def _recorded() -> Dict[str, Dict[str, Any]]:
    out = {}
    with open(ROOT / "data" / "support.answers.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            out[json.dumps(row["state"])] = row["answers"]
    return out


class ShardDouble(Runner):
    name = "shard-double"
    capabilities = Capabilities(devices=("cpu", "cuda"), sort_by_length=True)

    def __init__(self, model: Optional[str] = None, device: str = "cpu", clock: Any = None, **options: Any) -> None:
        self.info = RunnerInfo(runner=self.name, model_id="shard-double", revision="2" * 40, device=device,
                               settings={"decision_rule": "recorded answers, else a digest of the state"})
        self.clock, self.calls = clock, 0
        self.answers = _recorded()
        self.log = os.environ.get(LOG_ENV)

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        self.calls += 1
        handshake.my_turn()
        if self.log:
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps([os.getpid(), states]) + "\n")
        handshake.next_turn()
        if self.clock is not None:
            self.clock.advance_ms(10.0 + 2.0 * len(states))
        if any("BOOM" in str(s) for s in states):
            raise RuntimeError("runner exploded")
        return [self._one(s, questions) for s in states]

    def _one(self, state: Any, questions: Dict[str, Any]) -> Dict[str, Any]:
        recorded = self.answers.get(json.dumps(state))
        if recorded is not None:
            return {"answers": {q: a for q, a in recorded.items() if q in questions}}
        digest = hashlib.sha256(json.dumps(state).encode("utf-8")).digest()
        answers = {}
        for k, (qid, body) in enumerate(sorted(questions.items())):
            p = 0.3 + (digest[k] % 70) / 100.0
            if body.get("type") == "noul":
                answers[qid] = {"type": "noul", "noul": 1.0 - p, "confidence": p, "answer_confidence": p}
            elif body.get("type") == "score":
                answers[qid] = {"type": "score", "score": float(digest[k] % 3), "answer_confidence": p}
            else:
                labels = [str(l) for l in body["criteria"]]
                pick = labels[digest[k] % len(labels)]
                rest = (1.0 - p) / max(1, len(labels) - 1)
                answers[qid] = {"type": "choice", "choice": pick, "answer_confidence": p,
                                "probabilities": {l: (p if l == pick else rest) for l in labels}}
        return {"answers": answers}


def main() -> None:
    from laya_cases.runners import registry
    from laya_cases_cli.app import main as cli_main

    registry.register(ShardDouble.name, ShardDouble)
    sys.argv = ["laya-cases"] + sys.argv[1:]
    cli_main()


if __name__ == "__main__":
    main()
