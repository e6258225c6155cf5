"""The markup primitives: escaping, numbers, tables, the page frame and its inline style sheet.

Numbers are shown rounded (`%.4f`) and carry their exact value in `data-v` (Python repr, which is
what the report JSON writes), so a reader and a test can both check a page against `report --json`.
"""
from __future__ import annotations

import html
import math
from typing import Any, Callable, Iterable, Optional, Sequence

STYLE = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1200px;
padding:0 1em;color:#1d1d1f;background:#fff}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ddd;padding:.25em .6em;
text-align:left;vertical-align:top}th{background:#f4f4f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fff1f0}tr.good td{background:#f0fff4}code,pre{font-family:ui-monospace,monospace;
font-size:.95em}pre{background:#f6f6f8;padding:.6em;overflow-x:auto;white-space:pre-wrap}
nav a{margin-right:1em}.muted{color:#666}.plots{display:flex;flex-wrap:wrap;gap:1.5em}
form.filters label{margin-right:1em}.ci{white-space:nowrap}.chart{max-width:100%;height:auto}
.wide{overflow-x:auto;max-width:100%}a:focus,button:focus,select:focus,input:focus{outline:2px solid #0a58ca}
""".replace("\n", "")


def esc(value: Any) -> str:
    """Any value as HTML text (quotes too: safe inside an attribute)."""
    return html.escape("" if value is None else str(value), quote=True)


def exact(value: Any) -> str:
    """The exact text of a number, as the report JSON writes it (NaN/Infinity as Python spells them)."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else ("true" if value else "false")
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("NaN" if math.isnan(value) else repr(value).replace("inf", "Infinity"))
    return str(value)


def shown(value: Any, fmt: str = "%.4f") -> str:
    if value is None:
        return "\u2013"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fmt % value if math.isfinite(value) else exact(value)
    return str(value)


def num(value: Any, fmt: str = "%.4f") -> str:
    """A numeric cell: shown rounded, exact in data-v."""
    if value is None or isinstance(value, str):
        return "<td>%s</td>" % esc(shown(value))
    return '<td class="n" data-v="%s">%s</td>' % (esc(exact(value)), esc(shown(value, fmt)))


def cell(value: Any) -> str:
    """A cell: numbers as `num`, anything else escaped text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) or value is None:
        return num(value)
    return "<td>%s</td>" % esc(shown(value))


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "", row_classes: Optional[Sequence[str]] = None,
          raw_headers: bool = False) -> str:
    """A table from header texts (escaped here, or ready HTML with `raw_headers`) and rows of ready cells
    (`num`, `cell` or raw `<td>`), in a box that scrolls sideways by itself: a narrow window never
    scrolls the page."""
    out = ['<div class="wide"><table%s><thead><tr>%s</tr></thead><tbody>' % (' class="%s"' % esc(cls) if cls else "",
                                                         "".join("<th>%s</th>" % (h if raw_headers else esc(h))
                                                                 for h in headers))]
    for i, row in enumerate(rows):
        klass = row_classes[i] if row_classes and i < len(row_classes) and row_classes[i] else ""
        out.append("<tr%s>%s</tr>" % (' class="%s"' % esc(klass) if klass else "", "".join(row)))
    out.append("</tbody></table></div>")
    return "".join(out)


def sort_header(text: Any, now: bool, descending: bool, href: Callable[[str], str]) -> str:
    """A column header that sorts by its column: `href(dir)` is the page in that order; ascending first,
    the other way when the column already sorts the page, which its mark shows."""
    mark = (" \u25bc" if descending else " \u25b2") if now else ""
    return link(href("desc" if now and not descending else "asc"), text) + esc(mark)


def link(href: str, text: Any) -> str:
    """A link whose href the caller built with `urllib.parse` quoting; both escaped here."""
    return '<a href="%s">%s</a>' % (esc(href), esc(text))


def page(title: str, body: str, nav: str = "", images: bool = False, reload_s: Optional[int] = None) -> str:
    """A whole document: no script, no external resource; with `images` (serve's compare pages) it may
    show images of its own server (the charts it draws after the page: views/serve/compare_pages.py);
    with `reload_s` the browser reloads it after that many seconds (a page still being completed)."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + ("<meta http-equiv=\"refresh\" content=\"%d\">" % reload_s if reload_s else "") +
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:%s; form-action 'self'\">"
            "<title>%s</title><style>%s</style></head>\n<body>%s<h1>%s</h1>\n%s\n</body></html>\n"
            % (" 'self'" if images else "", esc(title), STYLE, "<nav>%s</nav>" % nav if nav else "", esc(title), body))
