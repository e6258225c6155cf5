"""Time the full report (overall + 4 slice dimensions, every metric with its counts) on synthetic
decisions with rounded and with full-precision (distinct) confidences, side by side, against a
vectorised numpy pass over the same decisions (and, up to --reference-max, the reference's
aggregation, laya.evals). Each configuration runs in its own subprocess, so the peak RSS printed
(VmHWM) is that configuration's alone; a bootstrap row times `--bootstrap B` the same way. Prints
seconds, ratios and MB measured in the same run; asserts nothing.

    .venv/bin/python bench/report_bench.py [--sizes 1000000 10000000] [--kinds rounded distinct]
        [--bootstrap 100] [--bootstrap-size 1000000] [--reference-max 0]
        [--ingest-rows 100000] [--json-size 2000000] [--floors]

Two more rows: `ingest` of a recorded-answers file (decisions/s, the ratio to merely json.loads-ing
every line of the same file, and the per-row path alone on the same file), and `report --json` (text report, --no-cases, and with every case
streamed: seconds, file MB, MB/s, peak RSS).

--floors adds, under each distinct-confidence report row, what its risk-coverage curves cannot go below:
DuckDB sorting the (group, confidence) rows they need (one per paired case per group holding it) and
nothing else, and numpy's argsort of the confidences alone (one group).

The reference aggregates Python case dicts, so it runs only up to --reference-max decisions (10M
case dicts need ~10 GB); otherwise its column shows n/a.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic as S  # noqa: E402

from laya_cases.report import build as R  # noqa: E402
from laya_cases.store.warehouse import Warehouse  # noqa: E402
from laya_cases.query.sql import connect

EDGES = np.array([i / 15 for i in range(16)])


def numpy_group_metrics(conf, correct, is_choice, is_noul, err_mask, err):
    """Every published metric of one group, vectorised (the baseline a hand-rolled script would be)."""
    out = {}
    for name, mask in (("choice_accuracy", is_choice), ("noul_accuracy", is_noul)):
        if mask.any():
            out[name] = float(np.mean(correct[mask]))
    if err_mask.any():
        out["score_mae"] = float(np.mean(err[err_mask]))
    out["mean_confidence"] = float(np.mean(conf))
    paired = ~err_mask
    c, y = conf[paired], correct[paired]
    n = len(c)
    if n:
        inb = (c >= 0) & (c <= 1)
        bins = np.searchsorted(EDGES[1:15], c[inb], side="left")
        cnt = np.bincount(bins, minlength=15)
        sc = np.bincount(bins, weights=c[inb], minlength=15)
        sy = np.bincount(bins, weights=y[inb], minlength=15)
        nz = cnt > 0
        out["ece"] = float(np.sum(cnt[nz] / n * np.abs(sc[nz] / cnt[nz] - sy[nz] / cnt[nz])))
        out["brier"] = float(np.mean((c - y) ** 2))
        order = np.lexsort((-c, np.isnan(c)))
        cs, ys = c[order], y[order]
        both_nan = np.isnan(cs[1:]) & np.isnan(cs[:-1])                 # NaNs are one level (S3.12)
        boundary = np.concatenate(((cs[1:] != cs[:-1]) & ~both_nan, [True]))
        last = np.flatnonzero(boundary)
        accepted = last + 1.0
        hits = np.cumsum(ys)[last]
        rows = np.diff(np.concatenate(([0.0], accepted)))
        out["aurc"] = float(np.sum((1 - hits / accepted) * rows) / n)
        for cov in (0.5, 0.8):
            k = max(1, math.ceil(cov * n))
            lvl = np.searchsorted(accepted, k)
            out["selective_accuracy@%d" % round(cov * 100)] = float(hits[lvl] / accepted[lvl])
    return out


def numpy_report(d):
    q, conf, correct, err = d["q"], d["conf"], d["correct"].astype(float), d["err"]
    is_choice, is_noul, is_score = q == 0, q == 1, q == 2
    groups = {("overall", ""): np.ones(len(q), bool)}
    for dim, codes, names in (("language", d["lang"], S.LANGUAGES), ("model", d["model"], S.MODELS), ("qid", q, S.QIDS)):
        for i, name in enumerate(names):
            groups[(dim, name)] = codes == i
    for tag in ("vip", "hard"):
        groups[("tag", tag)] = np.isin(d["tags"], [i for i, t in enumerate(S.TAG_SETS) if tag in t])
    return {g: numpy_group_metrics(conf[m], correct[m], is_choice[m], is_noul[m], is_score[m], err[m])
            for g, m in groups.items()}


def reference_report(d):
    from laya import evals

    evaluators = evals.default_evaluators()
    cases = []
    for i in range(len(d["q"])):
        qi = int(d["q"][i])
        kind = S.TYPES[qi]
        correct = None if qi == 2 else bool(d["correct"][i])
        conf = float(d["conf"][i])
        scores = {"choice_accuracy": float(correct) if qi == 0 else None,
                  "noul_accuracy": float(correct) if qi == 1 else None,
                  "score_mae": float(d["err"][i]) if qi == 2 else None, "mean_confidence": conf}
        cases.append({"qid": S.QIDS[qi], "language": S.LANGUAGES[d["lang"][i]], "model": S.MODELS[d["model"][i]],
                      "tags": S.TAG_SETS[d["tags"][i]], "answer": {"type": kind}, "confidence": conf,
                      "correct": correct, "scores": scores})
    start = time.perf_counter()
    overall = evals._aggregate(cases, evaluators)
    slices = {dim: {k: evals._aggregate(g, evaluators) for k, g in evals._group_cases(cases, dim).items()}
              for dim in ("language", "model", "qid", "tag")}
    return time.perf_counter() - start, overall, slices


def peak_mb() -> float:
    """This process's peak resident set (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child(args) -> dict:
    """One measurement, in this (child) process: write | report | numpy | reference."""
    distinct = args.kind == "distinct"
    if args.step in ("json", "ingest", "floor"):
        return {"json": child_json, "ingest": child_ingest, "floor": child_floor}[args.step](args)
    if args.step == "write":
        S.write_run(Warehouse(args.store), "bench", S.decisions(args.n, distinct=distinct))
        return {}
    if args.step == "report":
        wh = Warehouse(args.store)
        options = R.Options(include_cases=False, bootstrap=args.bootstrap)
        R.build(connect(wh, ["bench"]), "bench", R.Options(include_cases=False))       # warm the file cache
        t = time.perf_counter()
        doc = R.build(connect(wh, ["bench"]), "bench", options)
        seconds = time.perf_counter() - t
        return {"s": seconds, "mb": peak_mb(), "overall": doc["overall"],
                "levels": doc["extensions"]["overall"]["aurc"]["n_levels"],
                "curve": len(doc["extensions"]["overall"]["risk_coverage"])}
    d = S.decisions(args.n, distinct=distinct)
    t = time.perf_counter()
    if args.step == "numpy":
        overall = numpy_report(d)[("overall", "")]
        return {"s": time.perf_counter() - t, "mb": peak_mb(), "overall": overall}
    seconds, overall, _ = reference_report(d)
    return {"s": seconds, "mb": peak_mb(), "overall": overall}


def child_json(args) -> dict:
    """`report` of the run in args.store as the CLI does it: text only, --json --no-cases, --json with
    cases (streamed; the file's size and MB/s)."""
    from laya_cases.report import answer_helper, stream as report_json

    wh = Warehouse(args.store)
    R.build(connect(wh, ["bench"]), "bench", R.Options(include_cases=False))       # warm the file cache
    t = time.perf_counter()
    doc = R.build(connect(wh, ["bench"]), "bench", R.Options(include_cases=False))
    text_s = time.perf_counter() - t
    target = str(Path(args.store) / "report.json")
    t = time.perf_counter()
    doc = R.build(connect(wh, ["bench"]), "bench", R.Options(include_cases=False))
    report_json.save(target, doc, wh, "bench", (), with_cases=False)
    bare_s = time.perf_counter() - t
    helper_kb = [0.0]                            # the answer-rendering helper process's peak (VmHWM)
    close = answer_helper.Helper.close

    def close_measured(self):
        try:
            with open("/proc/%d/status" % self.process.pid) as status:
                helper_kb[0] = max(float(line.split()[1]) for line in status if line.startswith("VmHWM"))
        except OSError:
            pass
        close(self)
    answer_helper.Helper.close = close_measured
    t = time.perf_counter()
    doc = R.build(connect(wh, ["bench"]), "bench", R.Options(include_cases=False))
    report_json.save(target, doc, wh, "bench", ())
    full_s = time.perf_counter() - t
    return {"text_s": text_s, "bare_s": bare_s, "full_s": full_s, "mb_file": os.path.getsize(target) / 1e6,
            "mb": peak_mb(), "helper_mb": helper_kb[0] / 1024.0}


def child_floor(args) -> dict:
    """What the curves cannot go below, on the run in args.store: the report's own tables up to
    level_cells (the rows `levels` sorts), then, timed, DuckDB sorting them by (group, -confidence) and
    nothing else, within the report's memory limit; and numpy argsort of the run's confidences alone
    (one group, no payload)."""
    from laya_cases.query import catalogue

    con = connect(Warehouse(args.store), ["bench"])
    catalogue.materialize_all(con, catalogue.build_order(["level_cells"], ("pipeline",)), {"run_id": "bench"})
    rows = con.execute("SELECT count(*) FROM level_cells").fetchone()[0]
    t = time.perf_counter()
    con.execute("CREATE TEMP TABLE sorted_rows AS SELECT * FROM level_cells ORDER BY gid, -conf")
    sort_s = time.perf_counter() - t
    conf = con.execute("SELECT confidence FROM cases WHERE run_id = 'bench'").fetchnumpy()["confidence"]
    conf = np.asarray(conf, dtype=np.float64)
    t = time.perf_counter()
    np.argsort(-conf, kind="stable")
    return {"rows": rows, "sort_s": sort_s, "argsort_s": time.perf_counter() - t}


INGEST_RSS_COPIES = 10        # the memory check's file: this many copies of the ingest row's file, states renamed


def child_ingest(args) -> dict:
    """json.loads of every line of the answers file, then `ingest` of it, in this process (kind "large":
    only `ingest` of the larger file, for its peak RSS)."""
    from laya_cases.record.ingest.answers import ingest

    if args.kind == "large":
        t = time.perf_counter()
        recorded = ingest(Warehouse(Path(args.store) / "wh"), str(Path(args.store) / "large.jsonl"), run_id="large")
        return {"s": time.perf_counter() - t, "decisions": recorded.n_cases, "mb": peak_mb()}
    path = Path(args.store) / "answers.jsonl"
    t = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
    loads_s = time.perf_counter() - t
    t = time.perf_counter()
    recorded = ingest(Warehouse(Path(args.store) / "wh"), str(path), run_id="ingest")
    seconds, mb = time.perf_counter() - t, peak_mb()
    t = time.perf_counter()                     # the per-row path alone (what ingest falls back to per line)
    ingest(Warehouse(Path(args.store) / "wh"), str(path), run_id="ingest-rows", bulk=False)
    return {"loads_s": loads_s, "s": seconds, "decisions": recorded.n_cases, "mb": mb,
            "rows_s": time.perf_counter() - t}


def extra_rows(args) -> None:
    """The ingest row and the report --json row (each in its own store and subprocesses)."""
    if args.ingest_rows:
        tmp = Path(tempfile.mkdtemp(prefix="lc-bench-"))
        try:
            with open(tmp / "answers.jsonl", "w", encoding="utf-8") as handle:
                for row in S.answers_rows(args.ingest_rows):
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            r = run_child("ingest", args.ingest_rows, "distinct", tmp)
            print("ingest: %d answers rows, %d decisions: json.loads of every line %.2f s; ingest %.2f s = %.0f "
                  "decisions/s; json.loads/ingest %.2f; peak %.0f MB; the per-row path alone %.2f s = %.0f "
                  "decisions/s (%.1fx slower)" % (
                      args.ingest_rows, r["decisions"], r["loads_s"], r["s"], r["decisions"] / r["s"],
                      r["loads_s"] / r["s"], r["mb"], r["rows_s"], r["decisions"] / r["rows_s"],
                      r["rows_s"] / r["s"]), flush=True)
            shutil.rmtree(tmp / "wh", ignore_errors=True)
            small = (tmp / "answers.jsonl").read_bytes()          # distinct states in every copy: no repeats
            with open(tmp / "large.jsonl", "wb") as handle:
                for copy in range(INGEST_RSS_COPIES):
                    handle.write(small.replace(b'"state": "message ', b'"state": "message %d-' % copy))
            big = run_child("ingest", args.ingest_rows * INGEST_RSS_COPIES, "large", tmp)
            print("ingest memory: peak %.0f MB at %d decisions, %.0f MB at %d decisions (%.2fx for %dx the "
                  "file; %.0f decisions/s)" % (r["mb"], r["decisions"], big["mb"], big["decisions"], big["mb"] / r["mb"],
                                               INGEST_RSS_COPIES, big["decisions"] / big["s"]), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json_size:
        tmp = Path(tempfile.mkdtemp(prefix="lc-bench-"))
        try:
            run_child("write", args.json_size, "distinct", tmp)
            r = run_child("json", args.json_size, "distinct", tmp)
            print("report --json, %d decisions (distinct): text report %.2f s; --no-cases %.2f s (%.2fx the text); "
                  "with cases %.2f s, %.0f MB file, %.1f MB/s; peak %.0f MB (its helper process: %.0f MB)" % (
                      args.json_size, r["text_s"], r["bare_s"], r["bare_s"] / r["text_s"], r["full_s"],
                      r["mb_file"], r["mb_file"] / r["full_s"], r["mb"], r["helper_mb"]), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def run_child(step: str, n: int, kind: str, store: Path, bootstrap: int = 0) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", step, "--n", str(n), "--kind", kind,
                          "--store", str(store), "--bootstrap", str(bootstrap)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def drift(ours: dict, theirs: dict) -> float:
    return max([abs(ours[k] - v) for k, v in theirs.items() if k in ours and not math.isnan(v)] or [0.0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 10_000_000], help="report rows (none: only the extra rows)")
    ap.add_argument("--kinds", nargs="+", default=["rounded", "distinct"], choices=["rounded", "distinct"])
    ap.add_argument("--bootstrap", type=int, default=100, help="replicates of the bootstrap row (0: none)")
    ap.add_argument("--bootstrap-size", type=int, default=1_000_000)
    ap.add_argument("--reference-max", type=int, default=0)
    ap.add_argument("--ingest-rows", type=int, default=100_000, help="answers rows (3 decisions each) of the "
                    "ingest row (0: none)")
    ap.add_argument("--floors", action="store_true", help="after each distinct-confidence report row, what its "
                    "curves cannot go below: DuckDB's bare sort of their (group, confidence) rows, numpy's argsort")
    ap.add_argument("--json-size", type=int, default=2_000_000, help="decisions of the report --json row (0: none)")
    for name in ("--child", "--kind", "--store"):
        ap.add_argument(name, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(argparse.Namespace(step=args.child, n=args.n, kind=args.kind, store=args.store,
                                                  bootstrap=args.bootstrap))))
        return
    print("load average (1, 5, 15 min): %.2f %.2f %.2f; %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    print("%10s %9s %9s %10s %9s %10s %10s %9s %11s %9s" % (
        "decisions", "conf", "levels", "report s", "numpy s", "numpy/ours", "report MB", "numpy MB",
        "reference s", "ref/ours"))
    plan = [(n, kind, 0) for n in args.sizes for kind in args.kinds]
    if args.bootstrap:
        plan.append((args.bootstrap_size, "rounded", args.bootstrap))
    for n, kind, boot in plan:
        tmp = Path(tempfile.mkdtemp(prefix="lc-bench-"))
        try:
            run_child("write", n, kind, tmp)
            ours = run_child("report", n, kind, tmp, boot)
            nump = run_child("numpy", n, kind, tmp)
            ref = run_child("reference", n, kind, tmp) if n <= args.reference_max and not boot else None
            label = kind if not boot else "%s B=%d" % (kind, boot)
            print("%10d %9s %9d %10.3f %9.3f %10.2f %10.0f %9.0f %11s %9s" % (
                n, label, ours["levels"], ours["s"], nump["s"], nump["s"] / ours["s"], ours["mb"], nump["mb"],
                "n/a" if ref is None else "%.3f" % ref["s"], "n/a" if ref is None else "%.2f" % (ref["s"] / ours["s"])),
                flush=True)
            print("%10s max |ours - numpy| %.3g%s; curve points %d" % (
                "", drift(ours["overall"], nump["overall"]),
                "" if ref is None else ", |ours - reference| %.3g" % drift(ours["overall"], ref["overall"]),
                ours["curve"]), flush=True)
            if args.floors and kind == "distinct" and not boot:
                f = run_child("floor", n, kind, tmp)
                print("%10s floor: DuckDB sorting the %d (group, confidence) rows of the curves, nothing else, "
                      "%.2f s (report / sort %.1fx); numpy argsort of the %d confidences alone %.2f s" % (
                          "", f["rows"], f["sort_s"], ours["s"] / f["sort_s"], n, f["argsort_s"]), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    extra_rows(args)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
