"""Small deterministic inline SVG plots of numbers the report already computed (no matplotlib):
the reliability diagram (extensions.*.reliability) and the risk-coverage curve
(extensions.overall.risk_coverage). Coordinates are written with two decimals, so the same numbers
give the same bytes."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from laya_cases.views.html.markup import esc, shown

W, H, PAD = 360, 300, 40          # canvas and margin (left/bottom axes)


def _x(v: float) -> str:
    return "%.2f" % (PAD + v * (W - PAD - 10))


def _y(v: float, top: float = 1.0) -> str:
    return "%.2f" % (H - PAD - (v / top) * (H - PAD - 20))


def _ok(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _axes(title: str, xlabel: str, ylabel: str, top: float) -> List[str]:
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
           'aria-label="%s">' % (W, H, W, H, esc(title)),
           '<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>' % (W, H),
           '<text x="%d" y="14" text-anchor="middle">%s</text>' % (W // 2, esc(title))]
    for i in range(6):
        t = i / 5
        out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>' % (_x(0), _y(t * top, top), _x(1), _y(t * top, top)))
        out.append('<text x="%d" y="%s" text-anchor="end">%s</text>' % (PAD - 4, _y(t * top, top), "%.3g" % (t * top)))
        out.append('<text x="%s" y="%d" text-anchor="middle">%.1f</text>' % (_x(t), H - PAD + 14, t))
    out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>' % (_x(0), _y(0, top), _x(1), _y(0, top)))
    out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>' % (_x(0), _y(0, top), _x(0), _y(top, top)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (W // 2 + PAD // 2, H - 6, esc(xlabel)))
    out.append('<text x="12" y="%d" text-anchor="middle" transform="rotate(-90 12 %d)">%s</text>'
               % (H // 2, H // 2, esc(ylabel)))
    return out


def reliability(bins: List[Dict[str, Any]], ece: Optional[float], label: str = "overall") -> str:
    """Accuracy per confidence bin against the diagonal; each filled bin a dot sized by its count."""
    out = _axes("Reliability (%s, ECE %s)" % (label, shown(ece)), "confidence", "accuracy in bin", 1.0)
    out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999" stroke-dasharray="4 3"/>'
               % (_x(0), _y(0), _x(1), _y(1)))
    filled = [b for b in bins if b.get("n_b") and _ok(b.get("mean_confidence")) and _ok(b.get("accuracy"))]
    total = sum(b["n_b"] for b in filled) or 1
    if filled:
        points = " ".join("%s,%s" % (_x(b["mean_confidence"]), _y(b["accuracy"])) for b in filled)
        out.append('<polyline points="%s" fill="none" stroke="#1f6fb2" stroke-width="1.5"/>' % points)
    for b in filled:
        r = 2.5 + 6 * math.sqrt(b["n_b"] / total)
        out.append('<circle cx="%s" cy="%s" r="%.2f" fill="#1f6fb2"><title>bin %s: %s cases, confidence %s, '
                   'accuracy %s</title></circle>' % (_x(b["mean_confidence"]), _y(b["accuracy"]), r, esc(b.get("bin")),
                                                     esc(b["n_b"]), esc(shown(b["mean_confidence"])),
                                                     esc(shown(b["accuracy"]))))
    out.append("</svg>")
    return "".join(out)


def risk_coverage(curve: List[Dict[str, Any]], aurc: Optional[float]) -> str:
    """Selective risk against coverage: a step per confidence level (ties never split, S3.12)."""
    pts = [p for p in curve if _ok(p.get("coverage")) and _ok(p.get("risk"))]
    top = max([0.05] + [p["risk"] for p in pts]) * 1.1
    out = _axes("Risk-coverage (AURC %s)" % shown(aurc), "coverage", "risk", top)
    if pts:
        path = ["M%s,%s" % (_x(0), _y(pts[0]["risk"], top))]
        for p in pts:
            path.append("V%s H%s" % (_y(p["risk"], top), _x(p["coverage"])))
        out.append('<path d="%s" fill="none" stroke="#b2421f" stroke-width="1.5"/>' % " ".join(path))
    out.append("</svg>")
    return "".join(out)
