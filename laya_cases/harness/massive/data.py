"""MASSIVE test rows per language through Hugging Face `datasets` (S7.1).

Two sources, both read with `datasets.load_dataset`:
- a local folder of per-locale JSON Lines files (`--data DIR`, e.g. the stored copy
  `shared/data/massive/test`): `<locale>.jsonl` (en-US.jsonl) or `<code>.jsonl` (en.jsonl), read with
  the `json` builder; fields `id`, `text` and `label` (or `label_text`);
- the Hub dataset `mteb/amazon_massive_intent`, split `test`, one config per language (fields `id`,
  `text`, `label_text`), when no folder is given. No network (or HF_HUB_OFFLINE/HF_DATASETS_OFFLINE
  without a cached copy): a usage error naming `--data`, exit 2.

Languages are named by the short codes the reference prints (en, de, zh-CN, ...: the mteb config
names); a MASSIVE locale (en-US) is accepted too. `all` is every mteb language (51); ca (ca-ES, added in
MASSIVE 1.1, not in mteb) is available by name from a local folder.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.interop import hub
from laya_cases.core.errors import shorten

HUB_DATASET = "mteb/amazon_massive_intent"
SPLIT = "test"
#: mteb config (the reference's short code) -> MASSIVE locale, in mteb's order.
LOCALES: Dict[str, str] = {
    "af": "af-ZA", "am": "am-ET", "ar": "ar-SA", "az": "az-AZ", "bn": "bn-BD", "cy": "cy-GB", "da": "da-DK",
    "de": "de-DE", "el": "el-GR", "en": "en-US", "es": "es-ES", "fa": "fa-IR", "fi": "fi-FI", "fr": "fr-FR",
    "he": "he-IL", "hi": "hi-IN", "hu": "hu-HU", "hy": "hy-AM", "id": "id-ID", "is": "is-IS", "it": "it-IT",
    "ja": "ja-JP", "jv": "jv-ID", "ka": "ka-GE", "km": "km-KH", "kn": "kn-IN", "ko": "ko-KR", "lv": "lv-LV",
    "ml": "ml-IN", "mn": "mn-MN", "ms": "ms-MY", "my": "my-MM", "nb": "nb-NO", "nl": "nl-NL", "pl": "pl-PL",
    "pt": "pt-PT", "ro": "ro-RO", "ru": "ru-RU", "sl": "sl-SL", "sq": "sq-AL", "sv": "sv-SE", "sw": "sw-KE",
    "ta": "ta-IN", "te": "te-IN", "th": "th-TH", "tl": "tl-PH", "tr": "tr-TR", "ur": "ur-PK", "vi": "vi-VN",
    "zh-CN": "zh-CN", "zh-TW": "zh-TW",
}
EXTRA_LOCALES = {"ca": "ca-ES"}          # MASSIVE 1.1 only: local folders, never `all`
NO_DATA = ("no MASSIVE data: pass --data DIR (a folder of <locale>.jsonl files such as en-US.jsonl, fields "
           "id, text, label) or run with network access to the Hugging Face Hub (%s)" % HUB_DATASET)


@dataclass
class Language:
    """One language's whole test split: records {id, text, label} in file order."""

    code: str
    locale: str
    records: List[Dict[str, Any]]
    source: str


def _all_codes() -> Dict[str, str]:
    return dict(LOCALES, **EXTRA_LOCALES)


def code_of(name: str) -> str:
    """A short code (en, zh-CN) or a MASSIVE locale (en-US), any case -> the short code."""
    known = _all_codes()
    folded = {k.lower(): k for k in known}
    folded.update({v.lower(): k for k, v in known.items()})
    code = folded.get(str(name).strip().lower())
    if code is None:
        raise UsageError("unknown MASSIVE language %s; choose one of %s or all"
                         % (shorten(repr(name)), ", ".join(LOCALES)))
    return code


def parse_langs(spec: str) -> List[str]:
    """`en,de,fr` or `all` -> short codes, in the order given (a repeat is refused)."""
    names = [s.strip() for s in str(spec).split(",") if s.strip()]
    if not names:
        raise UsageError("--langs needs at least one language (e.g. en,de,fr or all)")
    if len(names) == 1 and names[0].lower() == "all":
        return list(LOCALES)
    codes = [code_of(n) for n in names]
    repeated = sorted({c for c in codes if codes.count(c) > 1})
    if repeated:
        raise UsageError("--langs names %s more than once" % ", ".join(repeated))
    return codes


def _local_file(folder: Path, code: str) -> Path:
    locale = _all_codes()[code]
    for name in ("%s.jsonl" % locale, "%s.jsonl" % code):
        if (folder / name).is_file():
            return folder / name
    raise UsageError("%s has no %s.jsonl (MASSIVE %s)" % (folder, locale, code))


def _records(table: Any, where: str) -> List[Dict[str, Any]]:
    columns = set(table.column_names)
    label = "label_text" if "label_text" in columns else "label"
    missing = [c for c in ("text", label) if c not in columns]
    if missing:
        raise UsageError("%s has no field %s" % (where, ", ".join(repr(m) for m in missing)))
    ids = table["id"] if "id" in columns else range(len(table))
    out = []
    for i, (ident, text, gold) in enumerate(zip(ids, table["text"], table[label])):
        if not isinstance(text, str) or not isinstance(gold, str) or not gold:
            raise UsageError("%s row %d: 'text' and %r must be non-empty strings" % (where, i + 1, label))
        out.append({"id": str(ident), "text": text, "label": gold})
    if not out:
        raise UsageError("%s contains no rows" % where)
    return out


def _quiet_datasets() -> Any:
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    return datasets


def load_local(path: Path, code: str) -> Language:
    """One language from a folder (or one .jsonl file) through the `json` builder of `datasets`."""
    path = Path(path)
    file = path if path.is_file() else _local_file(path, code) if path.is_dir() else None
    if file is None:
        raise UsageError("--data %s is neither a folder nor a file" % path)
    datasets = _quiet_datasets()
    try:
        table = datasets.load_dataset("json", data_files=str(file), split="train")
    except Exception as exc:                      # malformed JSON, unreadable file: one line
        raise UsageError("%s cannot be read: %s" % (file, shorten(str(exc).splitlines()[0] if str(exc) else
                                                                     type(exc).__name__, 200))) from None
    return Language(code, _all_codes()[code], _records(table, str(file)), str(file))


def load_hub(code: str) -> Language:
    """One language from `mteb/amazon_massive_intent` (network, or a cached copy)."""
    if code not in LOCALES:
        raise UsageError("%s is not in %s; pass --data DIR with %s.jsonl" % (code, HUB_DATASET, _all_codes()[code]))
    datasets = _quiet_datasets()
    try:
        table = datasets.load_dataset(HUB_DATASET, code, split=SPLIT)
    except Exception:                             # offline, unreachable, not cached: say what to pass
        raise UsageError(NO_DATA) from None
    return Language(code, LOCALES[code], _records(table, "%s/%s" % (HUB_DATASET, code)),
                    "%s/%s:%s" % (HUB_DATASET, code, SPLIT))


def load(code: str, data: Optional[Path] = None) -> Language:
    """The language's whole test split from `data` (a folder or file), else from the Hub."""
    if data is not None:
        return load_local(Path(data), code)
    if not hub.reachable():
        raise UsageError(NO_DATA)
    return load_hub(code)


def describe(data: Optional[Path]) -> Tuple[str, str]:
    """(dataset name for the run, split) as the run's config records them."""
    return (str(data) if data is not None else HUB_DATASET), SPLIT
