"""`laya-cases calibrate --fit DEV --apply TEST`: recalibration fitted on one run and scored on another
(laya_cases/report/calibration.py; docs/recalibration.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE

def _num(value: Any) -> str:
    return "-" if value is None else "%.4f" % value


def _fit_line(row: Dict[str, Any]) -> str:
    if row["method"] == "platt":
        what = "platt a=%.4f b=%.4f%s" % (row["a"], row["b"], " (separable: no finite fit)" if row["separable"] else "")
    else:
        what = "temperature=%.4f%s" % (row["temperature"], " (at a bound)" if row["at_bound"] else "")
    return "  %-12s n=%-5d %s  nll %s -> %s" % (row["group"], row["n"], what, _num(row["nll_before"]),
                                                 _num(row["nll_after"]))


def text(doc: Dict[str, Any]) -> List[str]:
    from laya_cases.report.calibration import METRICS

    fit, scored = doc["fit"], doc["apply"]
    lines = ["fit    run %s: %d of %d paired case(s) usable" % (doc["fit_run"], fit["cases"]["usable"],
                                                                 fit["cases"]["paired"])]
    lines += [_fit_line(r) for r in fit["groups"]]
    lines.append("apply  run %s: %d of %d paired case(s) usable" % (doc["apply_run"], scored["cases"]["usable"],
                                                                   scored["cases"]["paired"]))
    for r in scored["applied"]:
        how = ("platt" if r["fitted_on"] == "platt" else "T=%.4f from %s" % (r["temperature"], r["fitted_on"]))
        lines.append("  %-12s %-6s %s" % (r["bucket"], r["answer_type"], how))
    lines.append("%-22s %8s %8s %8s" % ("metric", "before", "after", "change"))
    for key, name in METRICS:
        a, b = scored["before"][key], scored["after"][key]
        change = "-" if a is None or b is None else "%+.4f" % (b - a)
        lines.append("%-22s %8s %8s %8s" % (name, _num(a), _num(b), change))
    lines.append("reliability after (15 bins; * fewer than 10 cases, too small to read)")
    lines.append("%-13s %5s %10s %8s %8s" % ("bin", "n", "confidence", "accuracy", "gap"))
    for b in scored["reliability"]["after"]:
        if b["n_b"]:
            lines.append("%-13s %5d %10s %8s %+8.4f%s" % ("(%.3f, %.3f]" % (b["lower"], b["upper"]), b["n_b"],
                                                        _num(b["mean_confidence"]), _num(b["accuracy"]), b["gap"],
                                                        " *" if b["too_small"] else ""))
    return lines


@app.command("calibrate", short_help="Fit a temperature on one run, score it on another.")
def calibrate_command(
    fit_run: str = typer.Option(..., "--fit", metavar="DEV", help="The run the temperature (and Platt) is fitted on."),
    apply_run: str = typer.Option(..., "--apply", metavar="TEST", help="The run it is scored on: another run, "
                                  "sharing no case id with DEV."),
    platt: bool = typer.Option(False, "--platt", help="Also fit Platt scaling (a, b) for noul answers; it can "
                               "move the 0.5 cut, so noul accuracy can change."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the whole document (the "
                                            "fit, before/after numbers, both reliability tables) as JSON here."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Write the same tables as one "
                                            "self-contained HTML file here (no script)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Recalibrate on a held-out run: fit temperature scaling on DEV (one temperature per Laya
    option-count bucket where the run stores them, else one), apply it to TEST from its stored logits
    or log-probabilities, and print ECE (equal-width, equal-mass, class-wise), Brier, NLL and selective
    accuracy before and after. DEV and TEST must be different runs with no case in common.

    \b
    Examples:
      laya-cases calibrate --fit dev --apply test
      laya-cases calibrate --fit dev --apply test --platt --json cal.json --html cal.html
    """
    from laya_cases.report import calibration as C

    doc = C.calibrate(warehouse_of(warehouse), fit_run, apply_run, platt)
    for line in text(doc):
        console.out(line)
    write_text(json_out, json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n", "JSON")
    if html_out is not None:
        from laya_cases.views.html.runset_view import calibration_html
        write_text(html_out, calibration_html(doc), "calibration HTML")
