"""`laya-cases export-onnx`: the MiniLM embedder or a Laya checkpoint as ONNX (fp32, optionally INT8),
for `run --onnx`; `laya-cases export RUN --format harness` and `laya-cases import FILE`: a run as the MASSIVE harness
JSON document (S7.7) and back (docs/massive.md), and other harnesses' logs as runs (docs/imports.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, fail, is_stdout, warehouse_of, write_text
from laya_cases_cli.options import WAREHOUSE

FORMATS = ("harness",)


@app.command("export", short_help="Write a run as a document another tool reads.")
def export_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run id (see `laya-cases runs`)."),
    format_: str = typer.Option("harness", "--format", metavar="harness", help="harness: the MASSIVE harness "
                                "document (config, report per language, summary, cases)."),
    out: Path = typer.Option(..., "--out", metavar="FILE", help="Where to write the JSON document; `-`: stdout."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Write a run as a document another tool reads, recomputed from the store.

    --format harness: the per-language harness document; the harness's own check
    |mean(correct) - accuracy| < 5e-5 per language runs before anything is written.

    \b
    Example:
      laya-cases export RUN --format harness --out massive.json
    """
    from laya_cases.harness.massive import document

    if format_ not in FORMATS:
        fail("--format must be one of %s, got %r" % (", ".join(FORMATS), format_))
    wh = warehouse_of(warehouse)
    if not wh.has_run(run_id):
        fail("unknown run %r in warehouse %s (see `laya-cases runs`)" % (run_id, wh.root))
    text = json.dumps(document.build(wh, run_id), ensure_ascii=False, indent=1) + "\n"
    write_text(out, text, "harness document")         # `-`: to stdout
    if not is_stdout(out):
        console.note("wrote %s" % out)


@app.command("import", short_help="Load lm-eval, lighteval, HELM, inspect or harness logs as runs.")
def import_command(
    path: Path = typer.Argument(..., metavar="PATH", help="lm-eval --log_samples output (folder or results file), "
                                "lighteval --save-details output (folder or details Parquet), HELM output (benchmark_output/runs/"
                                "<suite>/<run>/ or any folder above it), an inspect log, a harness "
                                "document (`export --format harness`) or a laya-evals harness report with its cases."),
    format_: Optional[str] = typer.Option(None, "--format", metavar="lm-eval|lighteval|helm|inspect|harness|laya-evals",
                                          help="The log format [default: detected from the files]."),
    norm: str = typer.Option("raw", "--norm", metavar="raw|chars|bytes", help="lm-eval/lighteval multiple choice: "
                             "score options by raw log-likelihood (acc), per character (acc_norm) or per byte (acc_bytes, "
                             "lm-eval only)."),
    item_id: Optional[str] = typer.Option(None, "--item-id", metavar="FIELD", help="lm-eval: the doc field "
                                          "(lighteval: the doc.specific field) that identifies an item across languages "
                                          "[default: doc_id / doc.id]."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]; "
                                         "several runs from one PATH get ID-1, ID-2, ..."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Load logs as runs (kind `import`), queryable next to ours (docs/imports.md).

    One run per lm-eval results file (one model, all its tasks), lighteval details
    folder (one model and date), HELM run folder (model x scenario x adapter) or
    inspect log; a path imported before with the same files and --norm names its
    run and commits nothing.

    \b
    Examples:
      laya-cases import lm_eval_out/ --norm chars
      laya-cases import lighteval_out/details/ --run-id le
      laya-cases import benchmark_output/runs/my-suite/ --format helm
      laya-cases import massive.json --run-id reference
      laya-cases massive report reference
    """
    from laya_cases.imports import import_path
    from laya_cases_cli.progress import RowProgress

    wh = warehouse_of(warehouse)
    with RowProgress("import (rows read)") as bar:        # a bar on a terminal's stderr only, gone at the end
        results = import_path(wh, str(path), format_, run_id, norm, item_id, progress=bar.update)
    for result in results:
        for note in result.notes:
            console.note(note)
        if not result.existing:
            console.note("committed run %s to %s (%d cases)" % (result.run_id, wh.root, result.n_cases))
        console.out(result.run_id)


@app.command("export-onnx", short_help="Export the MiniLM embedder or a Laya checkpoint to ONNX.")
def export_onnx(
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Directory for the graph(s) and export.json."),
    int8: bool = typer.Option(False, "--int8", help="Also write an INT8 copy (dynamic, per-channel weights)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="CKPT", help="A Laya checkpoint directory or hub "
                                        "id: export its decision model as laya.onnx, the graph laya's ONNXAgent "
                                        "runs [default: the MiniLM embedder, model.onnx]."),
) -> None:
    """Export the MiniLM embedder, or with --model a Laya checkpoint, to ONNX, for `run --onnx`.

    MiniLM: model.onnx (opset 17, pooling and L2 norm in the graph) and tokenizer.json. --model CKPT:
    laya.onnx, the checkpoint's decision model with the inputs and outputs laya's ONNXAgent feeds
    (scored with `run --onnx DIR/laya.onnx --model CKPT`). Both write export.json (sources and
    SHA-256s), with --int8 also the INT8 copy; prints the files written.

    \b
    Examples:
      laya-cases export-onnx --out onnx --int8
      laya-cases run data/support.jsonl --onnx onnx/model.int8.onnx
      laya-cases export-onnx --model ckpt --out ckpt-onnx --int8
      laya-cases run data/support.jsonl --onnx ckpt-onnx/laya.int8.onnx --model ckpt
    """
    if out.exists() and not out.is_dir():
        fail("--out %s exists and is not a directory" % out)
    from laya_cases.runners import laya_onnx_export, onnx_export

    try:
        meta = onnx_export.export(str(out), int8=int8) if model is None else \
            laya_onnx_export.export(model, str(out), int8=int8)
    except OSError as exc:
        fail("cannot write the export to %s: %s" % (out, exc.strerror or exc))
    for name in meta["files"]:
        console.out(str(out / name))
