"""HTML views of the warehouse (issue 13): self-contained report and diff files (`report --html`,
`diff --html`) and the pages `laya-cases serve` renders.

Everything here is string building over documents the library already computed (report.build,
diff.diff) plus a few bound SQL queries (sql/html/): no template engine, no JavaScript, no network,
deterministic bytes. Every value is HTML-escaped by `markup.esc` on its way into a page.
"""
from __future__ import annotations

from laya_cases.views.html.files import diff_html, report_html, write_html

__all__ = ["diff_html", "report_html", "write_html"]
