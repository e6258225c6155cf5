"""`laya-cases import` of lm-eval --log_samples lines against `json.loads` of the same lines (issue 31).

    nice .venv/bin/python bench/import_bench.py [--rows 1000000] [--per-row]

Writes one results file and one samples file of N multiple-choice docs into a temporary directory: the
real lines of tests/fixtures/imports/lmeval/gpt2-random-seed1 (banking77_mc4, 4 options, brier logged)
repeated with new doc_ids. Then, in this process, times (1) json.loads of every line (the baseline) and
(2) the import into a fresh warehouse (column-wise: laya_cases/imports/lmeval_columns.py), and with
--per-row (3) the same import row by row (the column-wise reader refused, as for a log it cannot read),
and prints rows/s of each, their ratio to the baseline, peak RSS and the load average: the machine is
shared, so compare the numbers of one run.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "tests" / "fixtures" / "imports" / "lmeval" / "gpt2-random-seed1"


def write_logs(folder: Path, rows: int) -> Path:
    results = json.loads(next(SRC.glob("results_*.json")).read_text(encoding="utf-8"))
    results["configs"] = {"banking77_mc4": results["configs"]["banking77_mc4"]}
    (folder / "results_bench.json").write_text(json.dumps(results), encoding="utf-8")
    lines = [json.loads(l) for l in next(SRC.glob("samples_banking77_mc4_*.jsonl")).read_text(encoding="utf-8").splitlines()]
    path = folder / "samples_banking77_mc4_bench.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i in range(rows):
            sample = dict(lines[i % len(lines)], doc_id=i)
            sample["doc"] = dict(sample["doc"], id="bench-%d" % i)     # distinct states, as in a real log
            out.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return path


def timed_import(tmp: Path, label: str, columnwise: bool, rows: int) -> float:
    from laya_cases.imports import import_path, lmeval_columns
    from laya_cases.record.ingest.blocks import Fallback
    from laya_cases.store.warehouse import Warehouse

    def refused(self, recorder, progress=None):
        raise Fallback("bench: row by row")

    original = lmeval_columns.Columnwise.record
    if not columnwise:
        lmeval_columns.Columnwise.record = refused
    try:
        t0 = time.perf_counter()
        [run] = import_path(Warehouse(tmp / label.replace(" ", "-")), str(tmp / "results_bench.json"), run_id="bench")
        took = time.perf_counter() - t0
    finally:
        lmeval_columns.Columnwise.record = original
    assert run.n_cases == rows and not run.existing
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--per-row", action="store_true", help="also time the import row by row")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from laya_cases.interop import pandas_probe

    pandas_probe.install()                       # as the CLI does: pyarrow need not import pandas

    tmp = Path(tempfile.mkdtemp(prefix="import-bench-"))
    try:
        samples = write_logs(tmp, args.rows)
        size = samples.stat().st_size
        t0 = time.perf_counter()
        with open(samples, "r", encoding="utf-8") as handle:
            for line in handle:
                json.loads(line)
        base = time.perf_counter() - t0
        print("rows %d (%.0f MB of samples), load average %s" % (args.rows, size / 1e6, " ".join("%.2f" % x for x in os.getloadavg())))
        print("json.loads baseline  %.1f s  %.0f rows/s" % (base, args.rows / base))
        for label, allowed in [("import", True)] + ([("import row by row", False)] if args.per_row else []):
            took = timed_import(tmp, label, allowed, args.rows)
            print("%-20s %.1f s  %.0f rows/s  (json.loads/import %.2f)" % (label, took, args.rows / took, base / took))
        print("peak RSS %.0f MB" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
