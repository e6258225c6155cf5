"""`laya-cases dataset from-hf` (a Hugging Face dataset, or local data files, as a labelled dataset) and
`laya-cases dataset to-hf` (a run's cases as a `datasets` folder); docs/datasets.md."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases_cli import console
from laya_cases_cli.app import _App, app, output_file, warehouse_of
from laya_cases_cli.options import WAREHOUSE

dataset_app = _App(help="Hugging Face datasets in and out: write a labelled dataset (JSON Lines) from a datasets "
                        "dataset or local data files, or save a run's cases as a datasets folder (docs/datasets.md).\n\n"
                        "\b\nExamples:\n"
                        "  laya-cases dataset from-hf ./saved --split test --state text --label label --out d.jsonl\n"
                        "  laya-cases dataset to-hf RUN --out cases_hf/",
                   no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
app.add_typer(dataset_app, name="dataset", short_help="Hugging Face datasets in and out (from-hf, to-hf).")


@dataset_app.command("from-hf")
def from_hf_command(
    source: str = typer.Argument(..., metavar="NAME_OR_PATH", help="A folder written by save_to_disk, a data file "
                                 "(.json/.jsonl/.csv/.tsv/.parquet/.arrow), a folder of data files, or a Hub "
                                 "dataset name (needs the network)."),
    split: Optional[str] = typer.Option(None, "--split", metavar="SPLIT", help="Split to read, e.g. test "
                                        "[default: the only one; `train` for a data file]."),
    config: Optional[str] = typer.Option(None, "--config", metavar="C", help="Dataset configuration (Hub datasets)."),
    state: List[str] = typer.Option(..., "--state", metavar="COLUMN", help="The input column; repeat it for an "
                                    "object state {column: value}."),
    label: str = typer.Option(..., "--label", metavar="COLUMN", help="The gold label column."),
    qid: Optional[str] = typer.Option(None, "--qid", metavar="ID", help="Question id [default: the label column]."),
    type_: str = typer.Option("choice", "--type", metavar="choice|noul|score", help="Question type."),
    option: List[str] = typer.Option([], "--option", metavar="TEXT", help="Repeat, in order: choice labels, noul's "
                                     "two label texts (false first), score level texts [default: ClassLabel names, "
                                     "else the distinct labels sorted (choice), levels 0..max (score)]."),
    instructions: Optional[str] = typer.Option(None, "--instructions", metavar="TEXT",
                                               help="The question text [default: e.g. 'Which intent fits the input?']."),
    language: Optional[str] = typer.Option(None, "--language-column", metavar="COLUMN", help="Column with each "
                                           "row's language (a report slice)."),
    tags: List[str] = typer.Option([], "--tag-column", metavar="COLUMN", help="Column whose value (or list of "
                                   "values) becomes the row's tags; repeatable."),
    item_id: Optional[str] = typer.Option(None, "--item-id-column", metavar="COLUMN", help="Column with the "
                                          "source item id (stored as the decisions' item_id)."),
    limit: Optional[int] = typer.Option(None, "--limit", metavar="N", help="First N rows only."),
    out: Path = typer.Option(..., "--out", metavar="FILE", help="Where to write the labelled dataset (JSON Lines)."),
) -> None:
    """Write a labelled dataset (JSON Lines, one question) from a Hugging Face dataset.

    Each row's state is the --state column (several: an object), its label the --label column in the
    JSON type of the question (choice: the label text, ClassLabel indices as names; noul: true/false;
    score: the level number). The file passes `laya-cases validate --strict`.

    \b
    Examples:
      laya-cases dataset from-hf ./banking77 --split test --state text --label label --out b77.jsonl
      laya-cases dataset from-hf reviews.csv --state review --label stars --type score --out s.jsonl
    """
    from laya_cases.interop.convert import from_hf

    if limit is not None and limit < 1:
        raise UsageError("--limit must be >= 1, got %d" % limit)
    with output_file(out) as target:
        rows = from_hf(source, state=state[0] if len(state) == 1 else state, label=label, qid=qid, type=type_,
                       options=option or None, instructions=instructions, language=language, tags=tags or None,
                       item_id=item_id, limit=limit, split=split, config=config, out=target)
    console.out("%d examples written to %s" % (len(rows), out))


@dataset_app.command("to-hf")
def to_hf_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="A new folder for the dataset (save_to_disk)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Save a run's cases as a Hugging Face dataset folder (datasets.load_from_disk reads it back).

    One row per case, every column of the decision schema with its type, plus run_id.

    \b
    Example:
      laya-cases dataset to-hf RUN --out run-cases
    """
    from laya_cases.api import Store
    from laya_cases.api import run_to_hf

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError("--out %s exists; give a new folder" % out)
    ds = run_to_hf(Store(warehouse_of(warehouse).root), run_id)
    try:
        ds.save_to_disk(str(out))
    except OSError as exc:
        raise UsageError("cannot write %r: %s" % (str(out), exc)) from None
    console.out("%d cases of run %s written to %s" % (len(ds), run_id, out))


@dataset_app.command("examples")
def examples_command(
    out: Path = typer.Option(Path("data"), "--out", metavar="DIR", help="Folder to copy the bundled examples into."),
    force: bool = typer.Option(False, "--force", help="Replace files that exist (else they are kept)."),
) -> None:
    """Copy the small datasets that ship with laya-cases (the help examples' data/support.jsonl, its
    recorded answers, the presentation states, the relevance prompt and manifest) into DIR.

    \b
    Example:
      laya-cases dataset examples && laya-cases run data/support.jsonl
    """
    import shutil

    from laya_cases.core import bundled

    for rel in bundled.names():
        target = out / rel
        if target.exists() and not force:
            console.note("kept %s (exists; --force replaces it)" % target)
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bundled.path(rel), target)
        except OSError as exc:
            raise UsageError("cannot write %r: %s" % (str(target), exc)) from None
        console.out(str(target))
