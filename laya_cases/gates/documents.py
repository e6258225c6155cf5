"""Documents a gate reads and their identity (S5.6, S5.7, S6.4 (c)): report files, run ids, comparability."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from laya_cases.core.errors import UsageError
from laya_cases.core import jsontext
from laya_cases.core.errors import shorten, shorten_path
from laya_cases.query import engines
from laya_cases.report import build as R
from laya_cases.store.layout import validate_run_id


IDENTITY_KEYS = ("schema", "dataset_sha256", "questions_sha256")
IDENTITY_LABELS = {"schema": "report schema", "dataset_sha256": "dataset bytes",
                   "questions_sha256": "question schema"}
TOURNAMENT_SCHEMA = "laya-tournament-evals-report/1"
SHORTLIST_SCHEMA = "laya-shortlist-evals-report/1"
COVERAGE_METRIC_DEFINITION = 2


def read_json(path: str, failure: str) -> Any:
    """A JSON file the user named; unreadable, undecodable or too deep is `failure % (repr(path), reason)`."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            value = jsontext.loads(handle.read())
        jsontext.check_unicode(value)             # its strings become Arrow strings in the gate tables
        return value
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        raise UsageError(failure % (shorten_path(repr(path)), shorten(str(exc), 200))) from None


class Document(dict):
    """A report document as read, with where it came from (`source`: its path, or `run 'ID'`), so a
    check that finds its shape wrong can name it however far it travelled."""

    source: Optional[str] = None


def named(source: Optional[str], message: str) -> str:
    """A message about a document, its source first (`report.json: baseline metric 'x' ...`)."""
    return message if source is None else "%s: %s" % (shorten_path(source), message)


def source_of(document: Any) -> Optional[str]:
    return getattr(document, "source", None)


def load_document(path: str) -> Dict[str, Any]:
    document = read_json(path, "cannot read report %s: %s")
    if not isinstance(document, dict):
        raise UsageError("cannot read report %s: expected a JSON object, found %s"
                         % (shorten_path(repr(path)), type(document).__name__))
    return _tagged(document, path)


def _tagged(document: Dict[str, Any], source: str) -> Document:
    tagged = Document(document)
    tagged.source = source
    return tagged


def resolve_report(ref: str, wh=None, options=None, session=None) -> Dict[str, Any]:
    """A report JSON file, else a run id in the warehouse (its report is built from the store, through
    the report session's connection when it holds that run)."""
    try:
        run_id = validate_run_id(ref)
    except UsageError:                            # a path, not a run id: the file's own error
        run_id = None
    if wh is None or run_id is None or os.path.exists(ref):
        return load_document(ref)
    if not wh.has_run(run_id):
        if wh.run_state(run_id) == "incomplete":
            wh.require_run(run_id)                # refused, named as incomplete (how to finish it)
        raise UsageError("cannot read report %s: no such file, and no run with that id in warehouse %s"
                         % (shorten(repr(ref)), wh.root))
    if session is not None and session.holds(run_id):
        return _tagged(session.baseline_report(run_id), "run %s" % shorten(repr(ref)))
    # only what a baseline compares: the published metrics (score_within adds some) and the cases
    engine, master = engines.of(options)          # the engine that builds the candidate builds this one too
    built = R.build(engines.connect(wh, [ref], engine, master), ref,
                    R.Options(score_within=getattr(options, "score_within", ())))
    return _tagged(built, "run %s" % shorten(repr(ref)))


def identity_of(document: Any) -> Dict[str, Any]:
    """S5.6: the document's config, with identity keys missing there read from its top level."""
    if not isinstance(document, dict):
        return {}
    config = document.get("config")
    found = dict(config) if isinstance(config, dict) else {}
    for key in IDENTITY_KEYS:
        if found.get(key) is None and document.get(key) is not None:
            found[key] = document[key]
    return found


def comparability_reasons(config: Dict[str, Any], baseline: Any) -> List[str]:
    """S5.7: identity keys present on both sides that differ, each naming both values."""
    other = identity_of(baseline)
    reasons = []
    for key in IDENTITY_KEYS:
        here, there = config.get(key), other.get(key)
        if here is None or there is None or here == there:
            continue
        reasons.append("%s (%s): baseline is %s, this run is %s" % (key, IDENTITY_LABELS[key], there, here))
    if config.get("schema") == other.get("schema") == TOURNAMENT_SCHEMA:
        here, there = config.get("tournament_group_size"), other.get("tournament_group_size")
        if here is None or there is None or here != there:
            reasons.append("tournament group size: baseline is %s, this run is %s" % (there, here))
    if config.get("schema") == other.get("schema") == SHORTLIST_SCHEMA:     # S7.19: k is part of the measurement
        here, there = (_k(config), _k(other))
        if here is None or there is None or here != there:
            reasons.append("shortlist k: baseline is %s, this run is %s" % (there, here))
    return reasons


def _k(config: Dict[str, Any]) -> Any:
    block = config.get("shortlist")
    return block.get("k") if isinstance(block, dict) else None


def comparability_failure(config: Dict[str, Any], baseline: Any) -> Optional[str]:
    reasons = comparability_reasons(config, baseline)
    return "baseline is not comparable: " + "; ".join(reasons) if reasons else None


def _shown_definition(recorded: Any) -> str:
    if recorded is None:
        return "1 (unrecorded)"
    shown = repr(recorded)
    return shown if len(shown) <= 40 else shown[:40] + "... (truncated)"


def coverage_definition_conflict(config: Any, baseline: Any) -> Optional[str]:
    """S6.4 (c): why a coverage metric must not be compared across these two documents, or None."""
    here = config.get("coverage_metric_definition") if isinstance(config, dict) else None
    base_config = baseline.get("config") if isinstance(baseline, dict) else None
    there = base_config.get("coverage_metric_definition") if isinstance(base_config, dict) else None
    if here == COVERAGE_METRIC_DEFINITION and there == COVERAGE_METRIC_DEFINITION:
        return None
    stale = []
    if here != COVERAGE_METRIC_DEFINITION:
        stale.append("this report says %s" % _shown_definition(here))
    if there != COVERAGE_METRIC_DEFINITION:
        stale.append("the baseline says %s" % _shown_definition(there))
    return ("%s, but a coverage cut here is definition %s -- regenerate it before comparing a coverage metric"
            % (" and ".join(stale), COVERAGE_METRIC_DEFINITION))
