"""`laya-cases ingest` of a hard answers file against `json.loads` of the same lines (issue 30 item 2).

    nice .venv/bin/python bench/ingest_bench.py [--rows 300000] [--pool 8] [--max-questions 4]

The hard case is what a user's script writes: every row asks its own subset of a pool of questions,
in its own order (`questions`, `expected` and `answers` in that order), with distinct full-precision
confidences and probabilities, so rows do not share one question template (record/ingest/template.py).
Times, in this process, (1) json.loads of every line (the baseline) and (2) `ingest` into a fresh
warehouse, and prints rows/s of each, their ratio, how many rows the column-wise path read, peak
RSS and the load average: the machine is shared, so compare the two numbers of one run.

Measured 2026-12-04 on the shared 2-core machine (load average 5), before any change to the column-wise
path: `--rows 50000` (125,526 decisions, 39 MB): json.loads 62,129 rows/s, ingest 21.8 s = 2,290 rows/s
(5,748 decisions/s), ratio 0.037; templates read 14,274 of the 50,000 rows, the rest went row by row.
`--rows 20000`: ratio 0.031, 5,336 of 20,000 rows through templates.

With case templates (record/ingest/cases.py), the same day, back to back with main's code (load
average 6-7): `--rows 50000`: main 19.2 s = 6,543 decisions/s, ratio 0.034, 14,274 rows through
templates; case templates 4.6 s = 27,056 decisions/s, ratio 0.163, all 50,000 rows column-wise (at load
average 3: 2.3 s = 55,637 decisions/s, ratio 0.20). `--rows 400000` (1,001,236 decisions, 315 MB, load
average 9): 24.7 s = 40,609 decisions/s, ratio 0.265, all rows column-wise, peak RSS 783 MB. Uniform
files are unchanged (bench/report_bench.py --ingest-rows 100000, back to back: ratio 0.32 on main,
0.40 with case templates).

`--messy` writes the same rows as issue 30's acceptance asks (keys in random orders, three spacings,
floats in exponent form on every other row: the same values, checked by json.loads). 2026-12-04, load
average 3.6-4, back to back: `--rows 50000` clean 2.5 s = 50,809 decisions/s (ratio 0.196), all rows
column-wise; `--messy` 19.6 s = 6,398 decisions/s (ratio 0.028), 6 of 50,000 rows column-wise: a line that
is not what json.dumps would write goes row by row, and trying the templates on every block of such lines
cost more than the per-row path itself (7.3 s on the same file). Since the templates first read a sample of
each large block and a file whose first block they cannot read goes row by row from its start
(record/ingest/bulk.py `_match`), at load average 2.6, back to back: clean 2.5 s = 49,412 decisions/s (ratio
0.178); `--messy` 8.2 s = 15,369 decisions/s (ratio 0.079), 0 rows column-wise. With the loose reader
(record/ingest/loose.py: any spelling, one DuckDB query a block), load average about 1, the same day:
`--rows 50000 --messy` 2.3 s = 53,547 decisions/s (ratio 0.189), every row column-wise; `--rows 400000
--messy` 10.5 s = 95,509 decisions/s (ratio 0.292), peak RSS 761-893 MB, against the clean file's 9.0 s =
111,621 decisions/s (ratio 0.287). Issue 30's 250,000 decisions/s, faster than json.loads, is not met.
Back to back with the code before the loose reader, `--rows 400000 --messy`: 37.3 s = 26,815 decisions/s
(ratio 0.080) before, 9.7 s = 102,997 decisions/s (ratio 0.300) after.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ["en", "fr", "de", "es", "ja"]


def pool(n: int) -> dict:
    """n question bodies, cycling through choice (3 options), noul and score."""
    bodies = {}
    for i in range(n):
        kind = ("choice", "noul", "score")[i % 3]
        body: dict = {"type": kind, "instructions": "Question %d (%s)?" % (i, kind)}
        if kind == "choice":
            body["criteria"] = {"refund": "money back", "cancel": "cancel an order", "other": "anything else"}
        elif kind == "score":
            body["criteria"] = ["low", "mid", "high"]
        bodies["q%d" % i] = body
    return bodies


_FLOAT = re.compile(r"(?<=[\[:,\s])(-?\d+\.\d+(?:e[-+]?\d+)?)")
_SEPARATORS = [(", ", ": "), (",", ":"), (" ,  ", " :\t")]


def _shuffled(value: dict, rng) -> dict:
    return {k: value[k] for k in rng.permutation(list(value)).tolist()}


def messy_line(row: dict, rng) -> str:
    """The row as another writer would put it: top-level and answer keys in a random order, one of three
    spacings, and (every other row) each float in exponent form with 17 significant digits ('%.16e', the
    same number: 7.0000000000000000e-01 for 0.7)."""
    row = _shuffled(dict(row, answers={q: _shuffled(a, rng) for q, a in row["answers"].items()}), rng)
    text = json.dumps(row, ensure_ascii=False, separators=_SEPARATORS[int(rng.integers(0, 3))])
    if rng.random() < 0.5:
        text = _FLOAT.sub(lambda m: "%.16e" % float(m.group(1)), text)
    return text


def write_hard(path: Path, rows: int, n_pool: int = 8, most: int = 4, seed: int = 0, messy: bool = False) -> int:
    """The hard answers file (with `messy`, each line as messy_line writes it); returns its number of
    decisions."""
    rng, mess = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    bodies = pool(n_pool)
    names = list(bodies)
    labels = ["refund", "cancel", "other"]
    decisions = 0
    with open(path, "w", encoding="utf-8") as out:
        for i in range(rows):
            k = int(rng.integers(1, most + 1))
            qids = [names[j] for j in rng.permutation(n_pool)[:k]]
            conf = rng.beta(5, 2, size=k).tolist()
            expected, answers = {}, {}
            for q, c in zip(qids, conf):
                kind = bodies[q]["type"]
                if kind == "choice":
                    truth = labels[int(rng.integers(0, 3))]
                    p = rng.dirichlet([1, 1, 1]).tolist()
                    expected[q] = truth
                    answers[q] = {"type": "choice", "choice": labels[int(np.argmax(p))],
                                  "probabilities": dict(zip(labels, p)), "answer_confidence": c}
                elif kind == "noul":
                    expected[q] = bool(rng.random() < 0.3)
                    answers[q] = {"type": "noul", "noul": 1 - c, "confidence": c}
                else:
                    expected[q] = int(rng.integers(0, 3))
                    answers[q] = {"type": "score", "score": 2 * c, "answer_confidence": c}
            row = {"state": "message %d: my order never arrived" % i, "questions": {q: bodies[q] for q in qids},
                   "expected": expected, "language": LANGUAGES[i % len(LANGUAGES)], "tags": ["t%d" % (i % 4)],
                   "answers": answers, "latency_ms": float(rng.random() * 100)}
            out.write((messy_line(row, mess) if messy else json.dumps(row, ensure_ascii=False)) + "\n")
            decisions += k
    return decisions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--pool", type=int, default=8, help="questions to draw each row's subset from")
    parser.add_argument("--max-questions", type=int, default=4, help="most questions a row asks")
    parser.add_argument("--messy", action="store_true", help="keys in random orders, mixed spacing, floats "
                        "in exponent form (issue 30's acceptance file)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from laya_cases.interop import pandas_probe

    pandas_probe.install()                       # as the CLI does: pyarrow need not import pandas
    from laya_cases.record.ingest import bulk as ingest_bulk
    from laya_cases.record.ingest.answers import ingest
    from laya_cases.store.warehouse import Warehouse

    tmp = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    try:
        path = tmp / "answers.jsonl"
        decisions = write_hard(path, args.rows, args.pool, args.max_questions, messy=args.messy)
        size = path.stat().st_size
        t0 = time.perf_counter()
        with open(path, "r", encoding="utf-8") as handle:
            for line in handle:
                json.loads(line)
        base = time.perf_counter() - t0
        seen = []
        original = ingest_bulk.BulkIngest.run

        def spy(self, *a, **kw):
            seen.append(self)
            return original(self, *a, **kw)

        ingest_bulk.BulkIngest.run = spy
        t0 = time.perf_counter()
        run = ingest(Warehouse(str(tmp / "wh")), str(path), run_id="bench")
        took = time.perf_counter() - t0
        ingest_bulk.BulkIngest.run = original
        assert run.n_cases == decisions, (run.n_cases, decisions)
        fast = seen[0].fast_rows if seen else 0
        print("rows %d, decisions %d (%.0f MB), load average %s"
              % (args.rows, decisions, size / 1e6, " ".join("%.2f" % x for x in os.getloadavg())))
        print("json.loads baseline  %.1f s  %.0f rows/s" % (base, args.rows / base))
        print("ingest               %.1f s  %.0f rows/s  %.0f decisions/s  (json.loads/ingest %.3f)"
              % (took, args.rows / took, decisions / took, base / took))
        print("rows read column-wise (templates or the loose reader) %d of %d" % (fast, args.rows))
        print("peak RSS %.0f MB" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
