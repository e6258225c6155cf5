"""A serve table page taken away: the same rows as the page, as CSV or JSON (`?format=csv|json`).

CSV: a header row, then one line per row; a number as its exact text (Python repr, as `report --json`
writes it), a boolean as true/false, a list as its JSON, null as an empty cell. JSON: strict (a NaN
or infinite number is null, as `laya-cases sql --format json` writes it), keys sorted, so the bytes
depend on the rows alone."""
from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Dict, List, Sequence, Tuple

FORMATS = ("html", "csv", "json")
CSV_TYPE, JSON_TYPE = "text/csv; charset=utf-8", "application/json"


def strict(value: Any) -> Any:
    """Strict JSON values: a NaN or infinite number is null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        return json.dumps(strict(value), ensure_ascii=False)
    return str(value)


def as_csv(columns: Sequence[str], rows: List[Dict[str, Any]]) -> Tuple[str, str]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return out.getvalue(), CSV_TYPE


def as_json(doc: Dict[str, Any]) -> Tuple[str, str]:
    return json.dumps(strict(doc), ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n", JSON_TYPE


REPORT_COLUMNS = ("dim", "key", "metric", "value", "ci_lower", "ci_upper", "n_cases")


def report_rows(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every number of a run page as one long table: the overall metrics (dim "overall"), then each slice
    group's, in the report's key order; a bootstrap interval where the report has one."""
    out = []
    ext = doc["extensions"]

    def row(dim: str, key: str, metric: str, value: Any, entry: Any, n: Any) -> Dict[str, Any]:
        ci = entry.get("ci") if isinstance(entry, dict) else None
        return {"dim": dim, "key": key, "metric": metric, "value": value, "n_cases": n,
                "ci_lower": ci.get("lower") if ci else None, "ci_upper": ci.get("upper") if ci else None}
    for metric in sorted(doc["overall"]):
        out.append(row("overall", "", metric, doc["overall"][metric], ext["overall"].get(metric),
                       ext["run"].get("n_cases")))
    for dim in sorted(doc["slices"]):
        for key in sorted(doc["slices"][dim]):
            counts = ext["slices"].get(dim, {}).get(key, {})
            for metric in sorted(doc["slices"][dim][key]):
                out.append(row(dim, key, metric, doc["slices"][dim][key][metric], counts.get(metric),
                               counts.get("n_cases")))
    return out
