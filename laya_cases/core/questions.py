"""Question bodies: option labels in canonical order, rendered option texts (S2.3), buckets (S2.6)."""
from __future__ import annotations

import json
import math
from typing import Any, List, Optional

TYPES = ("choice", "score", "noul")
NOUL_DEFAULT = {"false": "no, the statement does not hold", "true": "yes, the statement holds"}


def _rendered(description: Any) -> str:
    return description if isinstance(description, str) else json.dumps(description, ensure_ascii=False)


def _choice_items(criteria: Any) -> List[tuple]:
    if isinstance(criteria, dict):
        return list(criteria.items())
    if isinstance(criteria, list):
        return [(label, None) for label in criteria]
    return []


def choice_labels(body: Any) -> List[Any]:
    """Choice labels in index order, as written (str, int, float or bool)."""
    body = body if isinstance(body, dict) else {}
    return [label for label, _ in _choice_items(body.get("criteria"))]


def option_labels(body: Any) -> List[str]:
    """Option keys in index order, as text: choice labels, score levels "0".., noul false/true."""
    body = body if isinstance(body, dict) else {}
    kind = body.get("type")
    if kind == "choice":
        return [str(label) for label, _ in _choice_items(body.get("criteria"))]
    if kind == "score":
        criteria = body.get("criteria")
        return [str(i) for i in range(len(criteria))] if isinstance(criteria, list) else []
    if kind == "noul":
        return ["false", "true"]
    return []


def option_texts(body: Any) -> List[str]:
    """The option texts the model reads, in index order (S2.3)."""
    body = body if isinstance(body, dict) else {}
    kind = body.get("type")
    if kind == "choice":
        return [str(label) if description is None or description == "" else
                "%s: %s" % (label, _rendered(description))
                for label, description in _choice_items(body.get("criteria"))]
    if kind == "score":
        criteria = body.get("criteria")
        return (["level %d: %s" % (i, _rendered(text)) for i, text in enumerate(criteria)]
                if isinstance(criteria, list) else [])
    if kind == "noul":
        labels = body.get("labels") if isinstance(body.get("labels"), dict) else {}
        criteria = body.get("criteria") if isinstance(body.get("criteria"), dict) else {}
        out = []
        for key in ("false", "true"):
            label = str(labels.get(key, key)).strip()
            out.append("%s: %s" % (label, _rendered(criteria.get(key, NOUL_DEFAULT[key]))))
        return out
    return []


def instructions_text(body: Any) -> str:
    """Instructions as the model reads them: a string as is, anything else as its JSON (S2.2)."""
    ins = body.get("instructions") if isinstance(body, dict) else None
    return ins if isinstance(ins, str) else json.dumps(ins, ensure_ascii=False)


def bucket(kind: str, k: int) -> str:
    """Temperature bucket `<type>:<size>` (S2.6)."""
    if kind == "noul":
        return "noul:2"
    size = "2" if k <= 2 else "3-5" if k <= 5 else "6-10" if k <= 10 else "11+"
    return "%s:%s" % (kind, size)


def temperature_value(value: Any) -> Optional[float]:
    """A configured temperature as a finite float, or None for a bool, unparseable value, NaN or inf."""
    if isinstance(value, bool):
        return None
    try:
        t = float(value)
    except (TypeError, ValueError):
        return None
    return t if math.isfinite(t) else None


def clamp_temperature(value: Any) -> float:
    """S2.6: min(5, max(0.5, T)); a bool, unparseable value, NaN or inf becomes 1.0."""
    t = temperature_value(value)
    return 1.0 if t is None else min(5.0, max(0.5, t))
