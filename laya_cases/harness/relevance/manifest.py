"""Relevance manifests (S8.1): which languages a benchmark has, where each one's rows are, and which fields
are the item identity, the state and the label. docs/relevance.md documents the format.

A manifest is a JSON object:

    {"format": "laya-cases-relevance-manifest/1", "name": "xquad_r_relevance",
     "root": "xquad_r_relevance/test",                 # under the data root (or absolute)
     "fields": {"id": "id", "source_item_id": ["question_id", "pair"],
                "state": ["question", "sentence"], "label": "label_text",
                "positive": "yes", "negative": "no", "tags": ["pair"]},
     "instructions": "Does the sentence contain the answer to the question?",
     "languages": [{"language": "ar", "path": "ar.jsonl"},
                   {"language": "sw", "hub": "org/name", "config": "sw", "split": "test"}]}

A language's own "fields" override the manifest's. Local files load through Hugging Face `datasets`
(the `json` builder); a `hub` entry loads `datasets.load_dataset(hub, config, split=...)`, offline
unless HF_DATASETS_OFFLINE is set to 0. Relative paths resolve against the data root: `--data-root`,
else $LAYA_CASES_DATA_ROOT, else $LAYA_CASES_SHARED/data, else ../shared/data beside the project.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core.errors import UsageError, shorten, shorten_path
from laya_cases.core.identity import file_sha256
from laya_cases.interop.hub import reachable

FORMAT = "laya-cases-relevance-manifest/1"
QID = "relevant"
DEFAULT_FIELDS: Dict[str, Any] = {"id": "id", "source_item_id": ["question_id", "pair"],
                                  "state": ["question", "sentence"], "label": "label_text",
                                  "positive": "yes", "negative": "no", "tags": ["pair"]}
DEFAULT_INSTRUCTIONS = "Does the sentence contain the answer to the question?"
_SOURCE_ITEM_SEPARATOR = ":"


@dataclass
class Language:
    language: str
    fields: Dict[str, Any]
    path: Optional[Path] = None          # a local JSON Lines file
    hub: Optional[Dict[str, Any]] = None  # {"hub", "config", "split", "revision"}

    @property
    def source(self) -> str:
        return str(self.path) if self.path is not None else "hub:%s" % self.hub["hub"]


@dataclass
class Manifest:
    name: str
    where: str                           # the manifest file, or the --data folder
    instructions: str
    languages: List[Language] = field(default_factory=list)
    sha256: Optional[str] = None

    def pick(self, langs: Optional[Sequence[str]]) -> List[Language]:
        if not langs:
            return list(self.languages)
        known = {l.language: l for l in self.languages}
        missing = [code for code in langs if code not in known]
        if missing:
            raise UsageError("--langs: %s not in %s (it has %s)" % (
                ", ".join(missing), shorten(self.where), ", ".join(sorted(known))))
        return [known[code] for code in dict.fromkeys(langs)]


def data_root(option: Optional[str] = None) -> Path:
    if option:
        return Path(option)
    if os.environ.get("LAYA_CASES_DATA_ROOT"):
        return Path(os.environ["LAYA_CASES_DATA_ROOT"])
    shared = os.environ.get("LAYA_CASES_SHARED")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3].parent / "shared"
    return base / "data"


def _fields(value: Any, where: str, base: Dict[str, Any]) -> Dict[str, Any]:
    if value is None:
        return dict(base)
    if not isinstance(value, dict):
        raise UsageError("%s fields: must be an object" % where)
    unknown = sorted(set(value) - set(DEFAULT_FIELDS))
    if unknown:
        raise UsageError("%s fields: unknown key(s) %s" % (where, ", ".join(unknown)))
    out = dict(base, **value)
    for key in ("source_item_id", "state", "tags"):
        if isinstance(out[key], str):
            out[key] = [out[key]]
        if not isinstance(out[key], list) or not all(isinstance(x, str) and x for x in out[key]):
            raise UsageError("%s fields.%s: must be a field name or a list of them" % (where, key))
    for key in ("id", "label", "positive", "negative"):
        if not isinstance(out[key], str) or not out[key]:
            raise UsageError("%s fields.%s: must be a non-empty string" % (where, key))
    if not out["state"] or not out["source_item_id"]:
        raise UsageError("%s fields: state and source_item_id need at least one field" % where)
    return out


def _language(entry: Any, i: int, where: str, root: Path, base: Dict[str, Any]) -> Language:
    at = "%s languages[%d]" % (where, i)
    if not isinstance(entry, dict) or not isinstance(entry.get("language"), str) or not entry["language"]:
        raise UsageError("%s: needs a non-empty string `language`" % at)
    fields = _fields(entry.get("fields"), at, base)
    if isinstance(entry.get("path"), str) and entry["path"]:
        path = Path(entry["path"])
        return Language(entry["language"], fields, path=path if path.is_absolute() else root / path)
    if isinstance(entry.get("hub"), str) and entry["hub"]:
        hub = {k: entry.get(k) for k in ("hub", "config", "split", "revision")}
        hub["split"] = hub["split"] or "test"
        return Language(entry["language"], fields, hub=hub)
    raise UsageError("%s: needs `path` (a JSON Lines file) or `hub` (a Hugging Face dataset id)" % at)


def load_manifest(path: str, root_option: Optional[str] = None) -> Manifest:
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError("--manifest %s cannot be read: %s" % (shorten(path), exc)) from None
    except (ValueError, RecursionError) as exc:        # RecursionError: nested too deep to read
        raise UsageError("--manifest %s is not valid JSON: %s" % (shorten_path(path), shorten(str(exc), 200))) from None
    if not isinstance(doc, dict):
        raise UsageError("%s: a manifest is a JSON object" % path)
    if doc.get("format") != FORMAT:
        raise UsageError("%s format: expected %r, got %s" % (path, FORMAT, shorten(repr(doc.get("format")))))
    root = Path(doc.get("root") or ".")
    root = root if root.is_absolute() else data_root(root_option) / root
    base = _fields(doc.get("fields"), path, DEFAULT_FIELDS)
    langs = doc.get("languages")
    if not isinstance(langs, list) or not langs:
        raise UsageError("%s languages: must be a non-empty list" % path)
    out = Manifest(name=str(doc.get("name") or Path(path).stem), where=path,
                   instructions=str(doc.get("instructions") or DEFAULT_INSTRUCTIONS), sha256=file_sha256(path))
    seen = set()
    for i, entry in enumerate(langs):
        lang = _language(entry, i, path, root, base)
        if lang.language in seen:
            raise UsageError("%s languages[%d]: language %r listed twice" % (path, i, lang.language))
        seen.add(lang.language)
        out.languages.append(lang)
    return out


def from_folder(folder: str) -> Manifest:
    """`--data DIR`: every <lang>.jsonl in DIR (or DIR/test/) with the default fields."""
    base = Path(folder)
    if not base.is_dir():
        raise UsageError("--data %s is not a directory" % shorten(folder))
    files = sorted(base.glob("*.jsonl")) or sorted((base / "test").glob("*.jsonl"))
    if not files:
        raise UsageError("--data %s holds no <language>.jsonl files (nor test/<language>.jsonl)" % shorten(folder))
    langs = [Language(p.stem, dict(DEFAULT_FIELDS), path=p) for p in files]
    return Manifest(name=base.name, where=folder, instructions=DEFAULT_INSTRUCTIONS, languages=langs)


def open_benchmark(data: Optional[str], manifest: Optional[str], root: Optional[str] = None) -> Manifest:
    if (data is None) == (manifest is None):
        raise UsageError("give exactly one of --data DIR and --manifest FILE")
    return from_folder(data) if data is not None else load_manifest(manifest, root)


# ------------------------------------------------------------------------------ rows
def read_records(lang: Language) -> List[Dict[str, Any]]:
    """The language's records in file order, through Hugging Face `datasets` (json builder offline)."""
    if lang.path is not None and not lang.path.is_file():
        raise UsageError("language %s: %s does not exist (data root: --data-root or $LAYA_CASES_DATA_ROOT)"
                         % (lang.language, lang.path))
    import datasets

    datasets.utils.logging.disable_progress_bar()
    datasets.utils.logging.set_verbosity_error()
    try:
        if lang.path is not None:         # a fresh cache: never an earlier content of a rewritten file
            import tempfile

            with tempfile.TemporaryDirectory(prefix="laya-cases-relevance-") as cache:
                ds = datasets.load_dataset("json", data_files=str(lang.path), split="train", cache_dir=cache,
                                           keep_in_memory=True)
                return ds.to_list()
        else:
            hub = lang.hub
            if not reachable():
                raise ConnectionError("the Hugging Face Hub is not reachable (no network)")
            ds = datasets.load_dataset(hub["hub"], hub.get("config"), split=hub["split"], revision=hub.get("revision"))
    except Exception as exc:     # a broken file or an unreachable hub id: one line, exit 2
        raise UsageError("language %s: %s cannot be loaded: %s: %s" % (
            lang.language, shorten(lang.source), type(exc).__name__, shorten(str(exc), 200))) from None
    return ds.to_list()


def _text(record: Dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if value is None or isinstance(value, (dict, list)) or str(value) == "":
        raise UsageError("%s field %r: missing or empty" % (where, name))
    return str(value)


def item_id(language: str, source_item_id: str) -> str:
    """The language-aware item id, derived from the language-neutral source item id (S8.1; the benchmark's
    ADR-0004): unique across languages, while rows of one source item join on `source_item_id`."""
    return "%s/%s" % (language, source_item_id)


def dataset_rows(lang: Language, instructions: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
    """S1 rows of one language: state {field: text}, one noul question `relevant`, gold = label is positive,
    `source_item_id` (language-neutral) and `item_id` = <language>/<source_item_id>."""
    f = lang.fields
    rows, seen = [], {}
    records = read_records(lang)
    for i, record in enumerate(records[:limit] if limit else records):
        where = "%s row %d" % (lang.source, i + 1)
        label = _text(record, f["label"], where)
        if label not in (f["positive"], f["negative"]):
            raise UsageError("%s field %r: expected %r or %r, got %s" % (
                where, f["label"], f["positive"], f["negative"], shorten(repr(label))))
        source_id = _SOURCE_ITEM_SEPARATOR.join(_text(record, k, where) for k in f["source_item_id"])
        if source_id in seen:
            raise UsageError("%s: source_item_id %s repeats row %d"
                             % (where, shorten(repr(source_id)), seen[source_id]))
        seen[source_id] = i + 1
        row = {"id": _text(record, f["id"], where), "item_id": item_id(lang.language, source_id),
               "source_item_id": source_id,
               "state": {k: _text(record, k, where) for k in f["state"]},
               "questions": {QID: {"type": "noul", "instructions": instructions}},
               "expected": {QID: label == f["positive"]}, "language": lang.language}
        tags = [str(record[k]) for k in f["tags"] if record.get(k) not in (None, "")]
        if tags:
            row["tags"] = tags
        rows.append(row)
    if not rows:
        raise UsageError("language %s: %s has no rows" % (lang.language, lang.source))
    return rows


def inventory(manifest: Manifest, langs: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """One entry per language: rows, yes, no, yes share, source."""
    out = []
    for lang in manifest.pick(langs):
        rows = dataset_rows(lang, manifest.instructions)
        yes = sum(1 for r in rows if r["expected"][QID])
        out.append({"language": lang.language, "rows": len(rows), "yes": yes, "no": len(rows) - yes,
                    "yes_share": yes / len(rows), "source": lang.source})
    return out
