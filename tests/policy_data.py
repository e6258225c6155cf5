"""Report documents of many language slices and a significant_at policy over them, for the gate policy tests
(tests/gates/test_policy_adjusted.py) and the Spark comparison (tests/query/test_spark.py)."""
from __future__ import annotations

import random
from typing import Any, Dict

CONFIG = {"schema": "s", "dataset_sha256": "d", "questions_sha256": "q"}


def documents(seed: int, k: int = 12):
    """Candidate and baseline of k language slices, 0..30 cases each (an empty one included), with
    per-slice drop chances from none to large; slice values are the means of the case scores."""
    rng = random.Random(seed)
    cand, base = [], []
    for s in range(k):
        size = 0 if s == 0 else rng.choice([3, 8, 20, 30])
        drop = rng.choice([0.0, 0.0, 0.1, 0.4, 0.8])
        for _ in range(size):
            b = 1.0 if rng.random() < 0.7 else 0.0
            c = 0.0 if b == 1.0 and rng.random() < drop else (1.0 if b == 0.0 and rng.random() < 0.1 else b)
            base.append(("L%02d" % s, b))
            cand.append(("L%02d" % s, c))

    def doc(cases):
        slices = {}
        for lang in sorted({l for l, _ in cases}):
            scores = [v for l, v in cases if l == lang]
            slices[lang] = {"choice_accuracy": sum(scores) / len(scores)}
        return {"config": dict(CONFIG), "overall": {"mean_confidence": 0.5}, "slices": {"language": slices},
                "cases": [{"qid": "q", "language": l, "scores": {"choice_accuracy": v}} for l, v in cases]}
    return doc(cand), doc(base), cand, base


def policy(k: int, **extra) -> Dict[str, Any]:
    return {"version": 1, "rules": [{"slice": {"language": "L%02d" % s}, "metric": "choice_accuracy", "min_count": 1,
                                     "max_drop": 0.02, "significant_at": 0.05, **extra} for s in range(k)]}
