"""What do chunked commits cost `laya-cases run`? (docs/schema.md "Runs committed in chunks")

Runs a scripted runner (no model: answering is nearly free, so this is the recording path alone, the
worst case for any overhead) over N rows, committed once (--commit-every 0) and in chunks of several
sizes, and prints the wall and CPU time of each (best of --repeats; CPU time is what a shared machine
cannot blur, wall time adds the fsyncs), with the number of part files written.
Never asserts.

    .venv/bin/python bench/chunk_commit.py [--rows 20000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from resume_double import ResumeDouble, write_dataset  # noqa: E402
from laya_cases.run.execute import execute
from laya_cases.run.options import RunOptions  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lc-chunks-"))
    ds = write_dataset(tmp / "ds.jsonl", args.rows, special=False)
    print("chunked commits: %d rows, --batch-size %d, scripted runner (recording path only)"
          % (args.rows, args.batch_size))
    base = None
    for every in (0, 10000, 2000, 500):
        best, cpu, parts = float("inf"), float("inf"), 0
        for i in range(args.repeats):
            wh = Warehouse(tmp / ("wh-%d-%d" % (every, i)))
            t, c = time.perf_counter(), time.process_time()
            execute(wh, RunOptions(str(ds), run_id="r", batch_size=args.batch_size, commit_every=every),
                    runner=ResumeDouble())
            best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
            parts = len(wh.case_files("r"))
            shutil.rmtree(wh.root)
        base = (best, cpu) if base is None else base
        print("  --commit-every %-6s wall %7.3f s (%+6.1f%%)  cpu %7.3f s (%+6.1f%%)  %3d part file(s)"
              % (every or "0", best, 100.0 * (best / base[0] - 1.0), cpu, 100.0 * (cpu / base[1] - 1.0), parts))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
