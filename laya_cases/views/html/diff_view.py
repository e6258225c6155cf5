"""A diff document (diff.diff) as HTML sections: the summary with the paired interval and McNemar
p, per-slice deltas with intervals, and the flipped cases. Used by `diff --html` and the compare
page of `laya-cases serve`."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional

from laya_cases.views.html.markup import cell, esc, link, num, table

#: flipped cases shown per page/file; the JSON (`diff --json`) lists all
FLIPS_SHOWN = 200
#: a group's insufficient_evidence (diff --margin), as the terminal says it
_EVIDENCE = {True: "insufficient", False: "decided", None: "no interval"}


def _ci(ci: Optional[List[float]]) -> str:
    return num(None) + num(None) if ci is None else num(ci[0], "%+.4f") + num(ci[1], "%+.4f")


def summary(d: Dict[str, Any]) -> str:
    rows = [("compared", d["compared"]), ("only in A", d["only_in_a"]), ("only in B", d["only_in_b"]),
            ("paired", d["paired"]), ("right -> wrong", d["right_to_wrong"]), ("wrong -> right", d["wrong_to_right"]),
            ("flip rate", d["flip_rate"]), ("accuracy A", d["accuracy_a"]), ("accuracy B", d["accuracy_b"]),
            ("delta (B - A)", d["delta"]), ("McNemar p (exact)", d["mcnemar_p"]),
            ("mean confidence shift", d["mean_confidence_shift"]), ("gold labels changed", d["label_changed"]),
            ("bootstrap replicates used", d["B_used"])]
    if "rerun_noise" in d:
        noise = d["rerun_noise"]["overall"]
        rows.append(("rerun noise: 95%% of a delta between two of %d reruns" % len(d["rerun_noise"]["runs"]),
                     noise["band"]))
        rows.append(("delta within rerun noise", noise["within"]))
    body = [["<td>%s</td>" % esc(name), num(value, "%+.4f" if name.startswith(("delta", "mean conf")) else "%.4f")]
            for name, value in rows]
    ci = d["ci95"]
    body.append(["<td>95% CI of delta (paired row bootstrap)</td>",
                 "<td>%s</td>" % ("\u2013" if ci is None else "<span data-lo=\"%s\" data-hi=\"%s\">[%+.4f, %+.4f]</span>"
                                  % (esc(repr(ci[0])), esc(repr(ci[1])), ci[0], ci[1]))])
    boot = d["bootstrap"]
    return ("<h2>Summary</h2>" + table(["quantity", "value"], body, "diff-summary")
            + '<p class="muted">B=%s, seed %s, level %s, %s paired row(s).</p>'
            % (esc(boot["B"]), esc(boot["seed"]), esc(boot["level"]), esc(boot["n_rows"])))


def slices(d: Dict[str, Any]) -> str:
    out = []
    for dim, groups in sorted(d["slices"].items()):
        rows = [["<td>%s</td>" % esc(key), num(g["paired"]), num(g["accuracy_a"]), num(g["accuracy_b"]),
                 num(g["delta"], "%+.4f"), _ci(g["ci95"]), num(g["right_to_wrong"]), num(g["wrong_to_right"]),
                 num(g["mcnemar_p"], "%.4g"), num(g.get("holm_p"), "%.4g"), num(g.get("bh_p"), "%.4g")]
                + ([] if d.get("margin") is None else [cell(_EVIDENCE[g.get("insufficient_evidence")])])
                for key, g in sorted(groups.items())]
        out.append("<h3>by %s</h3>" % esc(dim) + table(
            [dim, "paired", "accuracy A", "accuracy B", "delta", "95% lower", "95% upper", "right -> wrong",
             "wrong -> right", "McNemar p", "Holm p", "BH p"]
            + ([] if d.get("margin") is None else ["evidence at %.4f" % d["margin"]]), rows, "diff-slices"))
    return ("<h2>Per slice</h2>" + "".join(out)) if out else ""


#: The flip table's columns: (the flip entry's key, its header); `expected_a` does not sort.
FLIP_COLUMNS = (("flip", "direction"), ("row_index", "row"), ("line_no", "line"), ("qid", "qid"),
                ("expected_a", "expected"), ("predicted_a", "A"), ("confidence_a", "A confidence"),
                ("predicted_b", "B"), ("confidence_b", "B confidence"), ("label_changed", "label changed"))


def flips(d: Dict[str, Any], shown: int = FLIPS_SHOWN, href: Optional[Callable[[int, str], str]] = None,
          head: Optional[Callable[[str, str], str]] = None) -> str:
    """The flipped cases; with `href(row, qid)` (the serve compare page) a row links to the case side by side,
    and `head(key, header)` gives a header's HTML (serve: a link that sorts by it)."""
    items = d["flips"]
    if not items:
        return "<h2>Flipped cases</h2><p>No case flipped.</p>"
    rows, classes = [], []
    for f in items[:shown]:
        where = ("<td>%s</td>" % link(href(f["row_index"], f["qid"]), f["row_index"]) if href
                 else num(f["row_index"]))
        rows.append(["<td>%s</td>" % esc(f["flip"].replace("_", " ")), where, num(f["line_no"]),
                     cell(f["qid"]), "<td><code>%s</code></td>" % esc(json.dumps(f["expected_a"], ensure_ascii=False)),
                     cell(f["predicted_a"]), num(f["confidence_a"]), cell(f["predicted_b"]), num(f["confidence_b"]),
                     cell("yes" if f["label_changed"] else "")])
        classes.append("bad" if f["flip"] == "right_to_wrong" else "good")
    more = ('<p class="muted">%d more flipped case(s): `laya-cases diff --json` lists all.</p>'
            % (len(items) - shown) if len(items) > shown else "")
    headers = [head(key, text) if head else esc(text) for key, text in FLIP_COLUMNS]
    return ('<h2 id="flips">Flipped cases (%d)</h2>' % len(items)
            + table(headers, rows, "flips", classes, raw_headers=True) + more)


def sections(d: Dict[str, Any], href: Optional[Callable[[int, str], str]] = None, charts: str = "",
             head: Optional[Callable[[str, str], str]] = None) -> str:
    """The diff in reading order; `charts` (the runs' calibration, HTML) goes before the flip table."""
    return summary(d) + slices(d) + charts + flips(d, href=href, head=head)
