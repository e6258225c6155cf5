"""How much does `laya-cases run` cost on top of the model, and what does --sort-by-length buy?

1. Recording overhead (target <= 5%): decisions/s of `run` (MiniLM, one question set so rows
   batch) against the bare model's batched forward on the same states (tokenise + forward + pool,
   same micro-batch size, plus the option texts once). `run` adds dataset parsing, chunking,
   answer building, decision rows, Parquet writing and the commit.
2. --sort-by-length against unsorted on mixed-length MASSIVE text (1-8 utterances joined), where
   padding to the longest state of a micro-batch is what sorting saves.

Prints ratios; never asserts. Bare and run passes alternate and each timing is the best of --repeats
(the machine may be shared). Besides the end-to-end ratio, the run is split into time inside the
runner's calls (model + answer building) and time outside them (everything `run` adds).

    .venv/bin/python bench/run_overhead.py [--rows 600] [--batch-size 256] [--repeats 5] [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laya_cases.harness.massive import sampler as massive  # noqa: E402
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions  # noqa: E402
from laya_cases.runners import registry  # noqa: E402
from laya_cases.runners.embedding import option_embed_texts  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402


def dataset(path: Path, texts, labels, golds) -> None:
    body = {"type": "choice", "instructions": massive.INSTRUCTIONS,
            "criteria": {k: massive.option_text(k) for k in labels}}
    with open(path, "w", encoding="utf-8") as handle:
        for text, gold in zip(texts, golds):
            handle.write(json.dumps({"state": text, "questions": {"intent": body},
                                     "expected": {"intent": gold}}, ensure_ascii=False) + "\n")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=600)
    ap.add_argument("--batch-size", type=int, default=256, help="--batch-size of the run (rows per call)")
    ap.add_argument("--micro", type=int, default=32, help="the runner's encode batch (sentences per forward)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    shared = Path(os.environ.get("LAYA_CASES_SHARED", ROOT.parent / "shared"))
    records = massive.read_locale(shared / "data" / "massive" / "test" / "en-US.jsonl")
    labels = sorted({r["label"] for r in records})
    head = records[:args.rows]
    runner = registry.load("minilm")
    runner.encode_batch_size = args.micro
    inside = {"s": 0.0}
    predict = runner.predict_batch

    def counted(*a, **k):
        t = time.perf_counter()
        try:
            return predict(*a, **k)
        finally:
            inside["s"] += time.perf_counter() - t

    runner.predict_batch = counted
    tmp = Path(tempfile.mkdtemp(prefix="lc-bench-"))
    body = {"type": "choice", "criteria": {k: massive.option_text(k) for k in labels}}

    def measure(texts, sort: bool, tag: str):
        data = tmp / ("%s.jsonl" % tag)
        dataset(data, texts, labels, [r["label"] for r in head])
        counter = {"n": 0}

        def bare():
            runner._cache.clear()
            runner._encode(option_embed_texts(body))
            for start in range(0, len(texts), args.batch_size):
                runner._encode(texts[start:start + args.batch_size], sort_by_length=sort)

        def run():
            runner._cache.clear()
            counter["n"] += 1
            inside["s"] = 0.0
            wh = Warehouse(tmp / ("wh-%s-%d" % (tag, counter["n"])))
            execute(wh, RunOptions(str(data), batch_size=args.batch_size, sort_by_length=sort), runner=runner)

        run()                                   # warm-up (imports, allocator, tokenizer caches)
        bare_t, run_t, outside = [], [], []
        for _ in range(args.repeats):
            bare_t.append(timed(bare))
            run_t.append(timed(run))
            outside.append(run_t[-1] - inside["s"])
        return min(bare_t), min(run_t), min(outside)

    plain = [r["text"] for r in head]
    rng = random.Random(0)
    mixed = [" ".join(records[(i * 7 + j) % len(records)]["text"] for j in range(rng.randint(1, 8)))
             for i in range(len(head))]
    n = len(head)
    bare_s, run_s, outside_s = measure(plain, False, "plain")
    print("recording overhead (MiniLM, %d rows, 59 options, --batch-size %d, micro-batch %d, threads %d)"
          % (n, args.batch_size, args.micro, torch.get_num_threads()))
    print("  bare forward   %8.1f decisions/s" % (n / bare_s))
    print("  run            %8.1f decisions/s" % (n / run_s))
    print("  overhead       %+7.1f%%  end to end (target <= 5%%)" % (100.0 * (run_s / bare_s - 1.0)))
    print("  recording      %7.1f%%  of the run's time is outside the runner's calls (%.3f ms/decision)"
          % (100.0 * outside_s / run_s, 1000.0 * outside_s / n))
    _, unsorted_s, _ = measure(mixed, False, "mixed")
    _, sorted_s, _ = measure(mixed, True, "mixed-sorted")
    print("--sort-by-length on mixed-length text (1-8 utterances per state)")
    print("  unsorted       %8.1f decisions/s" % (n / unsorted_s))
    print("  sorted         %8.1f decisions/s" % (n / sorted_s))
    print("  speed-up       %8.2fx" % (unsorted_s / sorted_s))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
