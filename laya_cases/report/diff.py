"""Case-level diff of two runs (a laya-cases extension, spec S9): what changed, case by case.

Everything is SQL over the store (sql/compare/diff_*.sql): the two runs' partitions are joined on
`case_id`; flips, per-slice accuracy deltas, the exact McNemar p-value (sql/macros/mcnemar_exact.sql),
the mean confidence shift and changed gold labels are queries. With --by, each group's McNemar p
gains its Holm and Benjamini-Hochberg adjustments over the groups tested (sql/compare/adjusted_p.sql),
and with a margin a group whose interval reaches both -margin and +margin is marked
"insufficient evidence" (sql/macros/insufficient_evidence.sql). The paired bootstrap interval
resamples dataset rows with the S9.5 index stream -- CPython's `random.Random(seed).randrange(n)`,
replicate by replicate (laya_cases/query/resample.py), counted per class of rows with equal counts
(sql/compare/diff_unit_classes.sql, laya_cases/query/paired_bootstrap.py); the per-replicate deltas
are sql/compare/diff_replicates.sql and the percentile rule is the report's own
sql/bootstrap/intervals.sql.

    >>> r = diff(wh, "before", "after", by="language")
    >>> r["right_to_wrong"], r["wrong_to_right"], r["mcnemar_p"]
    (5, 2, 0.453125)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


from laya_cases.core.errors import UsageError
from laya_cases.query import catalogue, engines, paired_bootstrap
from laya_cases.query import sql as sqlfiles
from laya_cases.query.resample import quantile_levels
from laya_cases.report import runset
from laya_cases.report import stability as reruns_of

SCHEMA = "laya-cases-diff/1"
DIMENSIONS = ("language", "model", "qid", "tag")
LEVEL = 0.95
_GROUP_FIELDS = ("compared", "paired", "hits_a", "hits_b", "accuracy_a", "accuracy_b", "delta", "ci95", "B_used",
                 "right_to_wrong", "wrong_to_right", "flip_rate", "mcnemar_p", "holm_p", "bh_p", "n_confidence",
                 "mean_confidence_shift", "label_changed", "insufficient_evidence")
_ADJUSTED = ("holm_p", "bh_p")         # a --by group's only: the overall test is one test


def _check(by: Optional[str], bootstrap: int, seed: int, max_flip_rate: Optional[float],
           margin: Optional[float] = None) -> None:
    if by is not None and by not in DIMENSIONS:
        raise UsageError("--by must be one of %s, got %r" % (", ".join(DIMENSIONS), by))
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or not 100 <= bootstrap <= 100000:
        raise UsageError("--bootstrap must be an integer in 100..100000, got %r" % (bootstrap,))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError("--seed must be a non-negative integer, got %r" % (seed,))
    if max_flip_rate is not None and not 0.0 <= max_flip_rate <= 1.0:
        raise UsageError("--max-flip-rate must be a number in [0, 1], got %r" % (max_flip_rate,))
    if margin is not None and not 0.0 <= margin <= 1.0:
        raise UsageError("--margin must be a number in [0, 1], got %r" % (margin,))


def _json_or_none(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


@dataclass(frozen=True)
class DiffBlock:
    """A benchmark's own section of a diff, added by the benchmark (harness/diff_blocks.py lists them):
    `compute(wh, con, run_a, run_b)` is the block, or None unless both runs are of its kind."""
    name: str
    compute: Callable[[Any, Any, str, str], Optional[Dict[str, Any]]]
    text_lines: Callable[[Dict[str, Any]], List[str]]
    markdown_lines: Callable[[Dict[str, Any]], List[str]]


def diff(wh, run_a: str, run_b: str, *, by: Optional[str] = None, bootstrap: int = 2000, seed: int = 0,
         max_flip_rate: Optional[float] = None, margin: Optional[float] = None, engine: str = "duckdb",
         master: Optional[str] = None,
         blocks: Sequence[DiffBlock] = (),
         phase: Optional[Callable[[int, int, str], None]] = None,
         reruns: Optional[Sequence[str]] = None, interval: bool = True) -> Dict[str, Any]:
    """Compare run B against run A case by case; returns the diff document (see module docstring).
    `engine`, `master`: the engine that runs the SQL (query/engines, docs/scale.md); `blocks`: the
    benchmarks' own sections, each present when both runs are of its kind; `phase(done, total, step)`
    is called before each step (the command's progress bar); `margin`: the accuracy change that
    matters, which turns on the insufficient-evidence verdict; `reruns`: two or more reruns of A's
    dataset (another seed, batch size, a quantized copy) whose case-by-case noise the delta is read
    against (`rerun_noise`). `interval=False` draws no bootstrap replicate: every `ci95` is null and
    `B_used` 0, every other number as with it (serve's first view of two big runs, views/serve/data.py)."""
    _check(by, bootstrap, seed, max_flip_rate, margin)
    wh.require_run(run_a)
    wh.require_run(run_b)
    if reruns:
        runset.named(list(reruns), "diff --reruns")
        runset.same_dataset(wh, [run_a] + list(reruns), "diff --reruns")
    steps = ["compare/diff_slices.sql", "compare/diff_replicates.sql", "bootstrap/intervals.sql",
             "compare/diff_flips.sql"] + ["%s block" % b.name for b in blocks]
    step = _stepper(phase, steps)
    step()
    con = engines.connect(wh, sorted({run_a, run_b}), engine, master)
    order = catalogue.build_order(["diff_slices", "diff_class_units", "adjusted_p"], ("compare",))
    catalogue.materialize_all(con, order, {"run_a": run_a, "run_b": run_b, "dim": by})
    summary = sqlfiles.rows(sqlfiles.query(con, "compare/diff_summary.sql"))[0]
    n = summary["paired_rows"]
    step()
    counted = None if phase is None else (lambda done: phase(1, len(steps), "%s: %d of %d replicates"
                                                                % (steps[1], done, bootstrap)))
    con.register("boot_values", paired_bootstrap.replicate_values(con, seed, n, bootstrap, "diff_unit_classes",
                                                                  "compare/diff_replicates.sql", counted)
                 if interval else paired_bootstrap.values_table())
    step()
    overall, groups = _per_group(con, margin)
    step()
    flips = [dict(r, expected_a=_json_or_none(r["expected_a"]), expected_b=_json_or_none(r["expected_b"]))
             for r in sqlfiles.rows(sqlfiles.query(con, "compare/diff_flips.sql"))]
    drift = [dict(r, expected_a=_json_or_none(r["expected_a"]), expected_b=_json_or_none(r["expected_b"]))
             for r in sqlfiles.rows(sqlfiles.query(con, "compare/diff_label_drift.sql"))]
    failures: List[str] = []
    if max_flip_rate is not None:
        for row in sqlfiles.rows(sqlfiles.query(con, "gates/flip_rate.sql", {"max_flip_rate": max_flip_rate})):
            if row["failure"] == "missing":
                failures.append("flip rate is missing: no case is scored in both runs")
            else:
                failures.append("flip rate %.4f (%d of %d paired cases) is above the maximum %.4f"
                                % (row["value"], row["flips"], row["paired"], row["bound"]))
    result = {
        "schema": SCHEMA, "run_a": run_a, "run_b": run_b, "by": by,
        "only_in_a": summary["only_in_a"], "only_in_b": summary["only_in_b"],
        **overall,
        "slices": {by: groups.get(by, {})} if by else {},
        "margin": margin,
        "flips": flips,
        "label_drift": drift,
        "bootstrap": {"B": bootstrap, "seed": seed, "level": LEVEL, "unit": "row", "n_rows": n},
        "gate": {"max_flip_rate": max_flip_rate, "failures": failures},
    }
    for block in blocks:
        step()
        value = block.compute(wh, con, run_a, run_b)
        if value is not None:
            result[block.name] = value
    if reruns:
        result["rerun_noise"] = rerun_noise(wh, list(reruns), result)
    return result


def rerun_noise(wh, reruns: List[str], d: Dict[str, Any]) -> Dict[str, Any]:
    """The delta against rerun noise: `delta_noise` of the reruns' stability summary (sql/stability/
    summary.sql: half the 95% range of the accuracy delta between two independent reruns), overall and
    per group of the diff's --by, and whether |delta| is within it (None where either is missing)."""
    doc = reruns_of.stability(wh, reruns, by=d["by"])

    def verdict(entry: Optional[Dict[str, Any]], delta: Optional[float]) -> Dict[str, Any]:
        band = None if entry is None else entry["delta_noise"]
        return {"compared": None if entry is None else entry["compared"],
                "unstable_rate": None if entry is None else entry["unstable_rate"], "band": band,
                "within": None if band is None or delta is None else abs(delta) <= band}

    by = d["by"]
    groups = {key: verdict((doc["slices"].get(by) or {}).get(key), g["delta"])
              for key, g in d["slices"].get(by, {}).items()} if by else {}
    return {"runs": reruns, "overall": verdict(doc["overall"], d["delta"]), "slices": {by: groups} if by else {}}


def _noise(n: Dict[str, Any]) -> str:
    if n["band"] is None:
        return "no compared case"
    return "+/-%.4f (%s)" % (n["band"], "no delta" if n["within"] is None else
                             "the delta is within it" if n["within"] else "the delta is beyond it")


def _per_group(con, margin: Optional[float]) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Dict[str, Any]]]]:
    """(overall entry, {dim: {key: entry}}) from diff_slices, the replicates' intervals and the evidence."""
    lower, upper = quantile_levels(LEVEL)       # as the report's intervals (report.bootstrap)
    sqlfiles.materialize(con, "bootstrap/intervals.sql", "diff_intervals", {"lower": lower, "upper": upper})
    intervals = {(r["dim"], r["key"]): r for r in sqlfiles.rows(con.execute("SELECT * FROM diff_intervals"))}
    evidence = {(r["dim"], r["key"]): r for r in
                sqlfiles.rows(sqlfiles.query(con, "compare/diff_evidence.sql", {"margin": margin}))}
    used = {(dim, key): count for dim, key, count in con.execute(   # usable replicates, also below 2
        "SELECT split_part(dim, '@', 1), key, count(*) FROM boot_values GROUP BY ALL").fetchall()}
    groups: Dict[str, Dict[str, Dict[str, Any]]] = {}
    overall: Dict[str, Any] = {}
    for row in sqlfiles.rows(con.execute("SELECT * FROM diff_slices")):
        ci = intervals.get((row["dim"], row["key"]))
        row["B_used"] = used.get((row["dim"], row["key"]), 0)
        row["ci95"] = None if ci is None else [ci["lower"], ci["upper"]]
        row.update(evidence[(row["dim"], row["key"])])
        entry = {name: row[name] for name in _GROUP_FIELDS}
        if row["dim"] == "overall":
            overall = {name: value for name, value in entry.items() if name not in _ADJUSTED}
        else:
            groups.setdefault(row["dim"], {})[row["key"]] = entry
    if not overall:                            # no case in both runs: counts are zero, ratios absent
        overall = {name: 0 for name in ("compared", "paired", "hits_a", "hits_b", "right_to_wrong",
                                        "wrong_to_right", "n_confidence", "B_used", "label_changed")}
        overall.update({name: None for name in ("accuracy_a", "accuracy_b", "delta", "ci95", "flip_rate",
                                                "mean_confidence_shift", "insufficient_evidence")})
        overall["mcnemar_p"] = 1.0
    return overall, groups


def _stepper(phase: Optional[Callable[[int, int, str], None]], steps: List[str]) -> Callable[[], None]:
    """A call per step, each telling `phase` which one starts (nothing without a phase)."""
    done = [0]

    def step() -> None:
        if phase is not None and done[0] < len(steps):
            phase(done[0], len(steps), steps[done[0]])
        done[0] += 1
    return step


# ------------------------------------------------------------------------------- rendering
def _f(value: Optional[float], fmt: str = "%.4f") -> str:
    return "-" if value is None else fmt % value


def _ci(ci: Optional[List[float]]) -> str:
    return "-" if ci is None else "[%+.4f, %+.4f]" % tuple(ci)


def _evidence(insufficient: Optional[bool]) -> str:
    return {True: "insufficient", False: "decided", None: "no interval"}[insufficient]


def _answer(predicted: Optional[str], confidence: Optional[float]) -> str:
    return "%s (%s)" % (predicted, _f(confidence, "%.2f"))


def text_lines(d: Dict[str, Any], show: int = 10, blocks: Sequence[DiffBlock] = ()) -> List[str]:
    lines = [
        "runs        A=%s  B=%s" % (d["run_a"], d["run_b"]),
        "cases       %d compared, %d only in A, %d only in B" % (d["compared"], d["only_in_a"], d["only_in_b"]),
        "flips       %d right->wrong, %d wrong->right over %d paired cases (flip rate %s)"
        % (d["right_to_wrong"], d["wrong_to_right"], d["paired"], _f(d["flip_rate"])),
        "accuracy    A=%s B=%s delta=%s 95%% CI %s (B_used=%d)  McNemar p=%.4g"
        % (_f(d["accuracy_a"]), _f(d["accuracy_b"]), _f(d["delta"], "%+.4f"), _ci(d["ci95"]), d["B_used"],
           d["mcnemar_p"]),
        "confidence  mean shift %s over %d cases" % (_f(d["mean_confidence_shift"], "%+.4f"), d["n_confidence"]),
    ]
    if d.get("margin") is not None:
        lines.append("evidence    %s at margin %.4f" % (_evidence(d["insufficient_evidence"]), d["margin"]))
    if "rerun_noise" in d:
        noise = d["rerun_noise"]
        lines.append("rerun noise %s, 95%% of a delta between two of %d reruns (%s)" % (
            _noise(noise["overall"]), len(noise["runs"]), ", ".join(noise["runs"])))
    if d["label_changed"]:
        lines.append("label drift %d case(s) have a different gold label in B" % d["label_changed"])
    for direction, title in (("right_to_wrong", "right->wrong"), ("wrong_to_right", "wrong->right")):
        cases = [f for f in d["flips"] if f["flip"] == direction]
        if not cases:
            continue
        lines.append("%s (%d%s):" % (title, len(cases), "" if len(cases) <= show else ", showing %d" % show))
        for f in cases[:show]:
            lines.append("  row %d (line %d) %s: expected %s  A %s  B %s%s" % (
                f["row_index"], f["line_no"], f["qid"], json.dumps(f["expected_a"], ensure_ascii=False),
                _answer(f["predicted_a"], f["confidence_a"]), _answer(f["predicted_b"], f["confidence_b"]),
                "  [label changed]" if f["label_changed"] else ""))
    for dim, groups in d["slices"].items():
        lines.append("by %s:" % dim)
        for key, g in sorted(groups.items()):
            lines.append("  %s=%s  n=%d A=%s B=%s delta=%s CI %s r->w=%d w->r=%d p=%.4g holm=%s bh=%s%s" % (
                dim, key, g["paired"], _f(g["accuracy_a"]), _f(g["accuracy_b"]), _f(g["delta"], "%+.4f"),
                _ci(g["ci95"]), g["right_to_wrong"], g["wrong_to_right"], g["mcnemar_p"], _f(g["holm_p"], "%.4g"),
                _f(g["bh_p"], "%.4g"), "  insufficient evidence" if g["insufficient_evidence"] else "")
                + ("" if "rerun_noise" not in d else "  rerun noise %s" % _noise(d["rerun_noise"]["slices"][dim][key])))
    for block in blocks:
        if block.name in d:
            lines += block.text_lines(d[block.name])
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown(d: Dict[str, Any], show: int = 10, blocks: Sequence[DiffBlock] = ()) -> str:
    lines = ["## Case-level diff: `%s` -> `%s`" % (_cell(d["run_a"]), _cell(d["run_b"])), "",
             "| quantity | value |", "|---|---|"]
    for name, value in (("compared", d["compared"]), ("only in A", d["only_in_a"]), ("only in B", d["only_in_b"]),
                        ("paired", d["paired"]), ("right -> wrong", d["right_to_wrong"]),
                        ("wrong -> right", d["wrong_to_right"]), ("flip rate", _f(d["flip_rate"])),
                        ("accuracy A", _f(d["accuracy_a"])), ("accuracy B", _f(d["accuracy_b"])),
                        ("delta (B - A)", _f(d["delta"], "%+.4f")), ("95% CI (paired row bootstrap)", _ci(d["ci95"])),
                        ("McNemar p (exact)", "%.4g" % d["mcnemar_p"]),
                        ("mean confidence shift", _f(d["mean_confidence_shift"], "%+.4f")),
                        ("gold labels changed", d["label_changed"])):
        lines.append("| %s | %s |" % (name, value))
    margin = d.get("margin")
    if margin is not None:
        lines.append("| evidence at margin %.4f | %s |" % (margin, _evidence(d["insufficient_evidence"])))
    if "rerun_noise" in d:
        lines.append("| rerun noise (95%%, %d reruns) | %s |" % (len(d["rerun_noise"]["runs"]),
                                                              _noise(d["rerun_noise"]["overall"])))
    for dim, groups in d["slices"].items():
        lines += ["", "### by %s" % dim, "",
                  "| %s | n | accuracy A | accuracy B | delta | 95%% CI | right -> wrong | wrong -> right | McNemar p "
                  "| Holm p | BH p |%s" % (dim, "" if margin is None else " evidence |"),
                  "|---|---|---|---|---|---|---|---|---|---|---|" + ("" if margin is None else "---|")]
        for key, g in sorted(groups.items()):
            lines.append("| %s | %d | %s | %s | %s | %s | %d | %d | %.4g | %s | %s |%s" % (
                _cell(key), g["paired"], _f(g["accuracy_a"]), _f(g["accuracy_b"]), _f(g["delta"], "%+.4f"),
                _ci(g["ci95"]), g["right_to_wrong"], g["wrong_to_right"], g["mcnemar_p"], _f(g["holm_p"], "%.4g"),
                _f(g["bh_p"], "%.4g"),
                "" if margin is None else " %s |" % _evidence(g["insufficient_evidence"])))
    if d["flips"]:
        lines += ["", "### flipped cases", "", "| direction | row | line | qid | expected | A | B |",
                  "|---|---|---|---|---|---|---|"]
        for f in d["flips"][:show]:
            lines.append("| %s | %d | %d | %s | %s | %s | %s |" % (
                f["flip"].replace("_", " "), f["row_index"], f["line_no"], _cell(f["qid"]),
                _cell(json.dumps(f["expected_a"], ensure_ascii=False)), _cell(_answer(f["predicted_a"], f["confidence_a"])),
                _cell(_answer(f["predicted_b"], f["confidence_b"]))))
        if len(d["flips"]) > show:
            lines.append("")
            lines.append("%d more flipped case(s) in the JSON output." % (len(d["flips"]) - show))
    for block in blocks:
        if block.name in d:
            lines += block.markdown_lines(d[block.name])
    return "\n".join(lines) + "\n"
