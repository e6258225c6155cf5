"""Hugging Face `datasets`, pandas and polars tables in and out of laya-cases (docs/datasets.md).

In: `from_hf(source, state=..., label=...)` turns a `datasets.Dataset` (or a Hub name, a folder saved
with `save_to_disk`, local json/csv/parquet files), a pandas or a polars DataFrame into labelled rows
(spec S1) with one question: the label column becomes `expected[qid]` with the JSON type S1.3 asks for,
the question body (S2.2) is built from the mapping. Every source goes through one Arrow table, so the
same data gives the same bytes whatever it came in as. Out: `run_to_hf(store, run)` gives a run's cases
as a `datasets.Dataset` with the warehouse's Arrow types.

`datasets`, pandas and polars are imported only when a source of theirs is converted.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from laya_cases.core.errors import UsageError, shorten
from laya_cases.interop.hub import reachable
from laya_cases.interop.labels import TYPES, question

_FILE_BUILDERS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet",
                  ".arrow": "arrow", ".txt": "text"}

Columns = Union[str, Sequence[str], None]


@dataclass
class Mapping:
    """Which columns make a labelled row, and the question asked (docs/datasets.md)."""

    state: Columns                       # one column: its value; several: an object {column: value}
    label: str                           # the gold label column
    qid: Optional[str] = None            # question id [default: the label column's name]
    type: str = "choice"                 # choice / noul / score
    options: Any = None                  # choice labels (list, or dict label -> description), noul's two
    #                                      label texts (false first), score level texts; default: below
    instructions: Optional[str] = None   # the question text [default: convert_labels.INSTRUCTIONS]
    language: Optional[str] = None       # column holding the row's language
    tags: Columns = None                 # column(s) whose values (or list values) become the row's tags
    item_id: Optional[str] = None        # column holding the source item id (decision column item_id)
    limit: Optional[int] = None          # first N rows only


# ---------------------------------------------------------------------------------------------- in
def from_hf(source: Any, *, state: Columns, label: str, qid: Optional[str] = None, type: str = "choice",
            options: Any = None, instructions: Optional[str] = None, language: Optional[str] = None,
            tags: Columns = None, item_id: Optional[str] = None, limit: Optional[int] = None,
            split: Optional[str] = None, config: Optional[str] = None,
            out: Union[str, Path, None] = None) -> List[Dict[str, Any]]:
    """Labelled rows (S1) from a `datasets.Dataset`, a pandas or polars DataFrame, a pyarrow Table, or a
    string naming a Hub dataset / a `save_to_disk` folder / local data files (`split`, `config` pick the
    part). Returns the rows as dicts; with `out`, also writes them as JSON Lines (`validate --strict`
    passes on the file). Any mapping problem is a one-line UsageError naming the column (and row)."""
    if isinstance(source, (str, Path)):
        source = load_source(str(source), split=split, config=config)
    mapping = Mapping(state=state, label=label, qid=qid, type=type, options=options, instructions=instructions,
                      language=language, tags=tags, item_id=item_id, limit=limit)
    rows = to_rows(source, mapping)
    if out is not None:
        write_jsonl(rows, out)
    return rows


def load_source(name_or_path: str, split: Optional[str] = None, config: Optional[str] = None):
    """A `datasets.Dataset`: a folder written by `save_to_disk` (a DatasetDict one needs `split`), a data
    file or a list of files by extension (json/jsonl/csv/tsv/parquet/arrow/txt), another folder or a
    Hub name through `datasets.load_dataset` (the Hub needs the network)."""
    datasets = require_package("datasets")
    path = Path(name_or_path)
    split_name = split or "train"
    try:
        if path.is_dir() and any((path / f).exists() for f in ("dataset_info.json", "dataset_dict.json",
                                                                 "state.json")):
            return _pick_split(datasets.load_from_disk(str(path)), split, name_or_path)
        if path.is_file():
            builder = _FILE_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise UsageError("%s: cannot tell the format from the extension %r (use one of %s)"
                                 % (name_or_path, path.suffix, ", ".join(sorted(_FILE_BUILDERS))))
            kwargs = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
            return datasets.load_dataset(builder, data_files={split_name: str(path)}, split=split_name, **kwargs)
        if not path.exists() and (name_or_path.startswith((".", "/", "~")) or path.suffix.lower() in _FILE_BUILDERS):
            raise UsageError("%s: no such file or folder" % name_or_path)       # a Hub name is owner/name
        if not reachable():
            raise UsageError("%s: not a local file or folder, and the Hugging Face Hub is not reachable "
                             "(no network)" % name_or_path)
        return _pick_split(datasets.load_dataset(name_or_path, config, split=split), split, name_or_path)
    except UsageError:
        raise
    except Exception as exc:                      # datasets raises many kinds; the user gets one line
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError("cannot load dataset %s: %s" % (shorten(name_or_path), shorten(message, 300))) from None


def to_rows(source: Any, mapping: Mapping) -> List[Dict[str, Any]]:
    """The labelled rows of `source` under `mapping` (see from_hf)."""
    m = _checked(mapping)
    table, names = _table(source, m.limit)
    state_cols = _columns(m.state, "state")
    tag_cols = _columns(m.tags, "tags") if m.tags else []
    wanted = [("state", c) for c in state_cols] + [("label", m.label)] + [("tags", c) for c in tag_cols]
    wanted += [(role, col) for role, col in (("language", m.language), ("item_id", m.item_id)) if col]
    present = table.column_names
    for role, col in wanted:
        if col not in present:
            raise UsageError("column %r (%s) is not in the dataset; its columns: %s"
                             % (col, role, shorten(", ".join(present), 300)))
    if table.num_rows == 0:
        raise UsageError("the dataset has no rows")
    data = {col: _named(table.column(col).to_pylist(), names.get(col)) for _, col in wanted}
    labels = table.column(m.label).to_pylist()                  # ClassLabel indices kept for score/noul
    body, expected = question(m, labels, names.get(m.label))
    qid = m.qid or m.label
    rows = []
    for i in range(table.num_rows):
        row: Dict[str, Any] = {}
        if m.item_id and data[m.item_id][i] is not None:
            row["item_id"] = _json_value(data[m.item_id][i], i, m.item_id)
        if len(state_cols) == 1 and isinstance(m.state, str):
            row["state"] = _json_value(data[m.state][i], i, m.state)
        else:
            row["state"] = {c: _json_value(data[c][i], i, c) for c in state_cols}
        row["questions"] = {qid: body}
        row["expected"] = {qid: expected[i]}
        if m.language and data[m.language][i] is not None:
            row["language"] = str(_json_value(data[m.language][i], i, m.language))
        row_tags = [str(_json_value(t, i, c)) for c in tag_cols for t in _as_list(data[c][i]) if t is not None]
        if row_tags:
            row["tags"] = row_tags
        rows.append(row)
    return rows


def write_jsonl(rows: Sequence[Dict[str, Any]], out: Union[str, Path]) -> Path:
    """Write rows as UTF-8 JSON Lines (one object a line, no comment line), replacing `out` whole."""
    path = Path(out)
    if not path.name or path.is_dir():
        raise UsageError("cannot write %r: it is a directory; name a file (e.g. %s)"
                         % (str(out), os.path.join(str(out), "dataset.jsonl")))
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    tmp = path.with_name(".%s.%d.tmp" % (path.name, os.getpid()))
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise UsageError("cannot write %r: %s" % (str(out), exc)) from None
    return path


# ---------------------------------------------------------------------------------------------- helpers
def require_package(name: str):
    """The module `name`, or a UsageError saying how to install it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise UsageError("this needs the %r package: pip install %s" % (name, name)) from None


def _pick_split(loaded: Any, split: Optional[str], where: str):
    if hasattr(loaded, "keys") and not hasattr(loaded, "features"):        # a DatasetDict
        splits = sorted(loaded.keys())
        if split is None and len(splits) == 1:
            return loaded[splits[0]]
        if split not in loaded:
            raise UsageError("%s: %s; its splits: %s" % (where, "give --split" if split is None else
                                                         "no split %r" % split, ", ".join(splits)))
        return loaded[split]
    return loaded


def _checked(m: Mapping) -> Mapping:
    if m.type not in TYPES:
        raise UsageError("question type must be choice, noul or score, got %r" % (m.type,))
    if not isinstance(m.label, str) or not m.label:
        raise UsageError("label must name one column, got %r" % (m.label,))
    if m.qid is not None and (not isinstance(m.qid, str) or not m.qid):
        raise UsageError("qid must be a non-empty string, got %r" % (m.qid,))
    if m.instructions is not None and (not isinstance(m.instructions, str) or not m.instructions.strip()):
        raise UsageError("instructions must be a non-empty string, got %r" % (m.instructions,))
    if m.limit is not None and (isinstance(m.limit, bool) or not isinstance(m.limit, int) or m.limit < 1):
        raise UsageError("limit must be a positive integer, got %r" % (m.limit,))
    return m


def _columns(value: Columns, role: str) -> List[str]:
    cols = [value] if isinstance(value, str) else list(value or [])
    if not cols or not all(isinstance(c, str) and c for c in cols) or len(set(cols)) < len(cols):
        raise UsageError("%s must name one column or several distinct ones, got %r" % (role, value))
    return cols


def _table(source: Any, limit: Optional[int]) -> Tuple[Any, Dict[str, List[str]]]:
    """(pyarrow Table, {column: ClassLabel names}) of any supported source, first `limit` rows."""
    import pyarrow as pa

    kind = type(source).__module__.split(".")[0]
    names: Dict[str, List[str]] = {}
    if kind == "datasets":
        if not hasattr(source, "features"):
            raise UsageError("a %s: pick one split first, e.g. ds[\"test\"]" % type(source).__name__)
        if not hasattr(source, "select"):                        # an IterableDataset (streaming): read it
            rows = list(source.take(limit) if limit is not None else source)
            source = require_package("datasets").Dataset.from_list(rows, features=source.features)
        if limit is not None:
            source = source.select(range(min(limit, len(source))))
        names = {col: n for col, n in ((c, _class_names(f)) for c, f in source.features.items()) if n}
        table = source.with_format("arrow")[:]
    elif kind == "pandas":
        source = source.head(limit) if limit is not None else source
        try:
            table = pa.Table.from_pandas(source, preserve_index=False)
        except (pa.ArrowException, ValueError, TypeError) as exc:
            raise UsageError("cannot read the pandas DataFrame: %s" % shorten(str(exc), 300)) from None
    elif kind == "polars":
        source = source.collect() if hasattr(source, "collect") else source
        table = (source.head(limit) if limit is not None else source).to_arrow()
    elif isinstance(source, pa.Table):
        table = source.slice(0, limit) if limit is not None else source
    else:
        raise UsageError("cannot convert a %s: give a datasets.Dataset, a pandas or polars DataFrame, a pyarrow "
                         "Table or a dataset name/path" % type(source).__name__)
    return table, names


def _class_names(feature: Any) -> Optional[List[str]]:
    """A ClassLabel's names, also for a list of ClassLabel (tags)."""
    for f in (feature, getattr(feature, "feature", None)):
        if type(f).__name__ == "ClassLabel":
            return list(f.names)
    return None


def _named(values: List[Any], names: Optional[List[str]]) -> List[Any]:
    """ClassLabel indices as their names (-1, "no label", stays None); lists element by element."""
    if not names:
        return values

    def one(v: Any) -> Any:
        if isinstance(v, list):
            return [one(x) for x in v]
        return names[v] if isinstance(v, int) and 0 <= v < len(names) else None if v == -1 else v
    return [one(v) for v in values]


def _as_list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else [value]


def _json_value(value: Any, i: int, col: str) -> Any:
    """A cell as a JSON value: dates as ISO text, decimals as text; bytes (images, audio) refused."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        raise UsageError("row %d: column %r holds bytes (images and audio cannot be a state)" % (i, col))
    if isinstance(value, dict):
        return {str(k): _json_value(v, i, col) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v, i, col) for v in value]
    return value
