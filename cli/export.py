"""`laya-cases export-onnx`: the MiniLM embedder as ONNX (fp32, optionally INT8) for the onnx runner."""
from __future__ import annotations

from pathlib import Path

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, fail


@app.command("export-onnx")
def export_onnx(
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Directory for model.onnx, tokenizer.json, export.json."),
    int8: bool = typer.Option(False, "--int8", help="Also write model.int8.onnx (dynamic INT8, per-channel weights)."),
) -> None:
    """Export the MiniLM embedder to ONNX, for `run --onnx`.

    Writes model.onnx (opset 17, pooling and L2 norm in the graph), tokenizer.json and export.json
    (sources and SHA-256s) into --out, with --int8 also model.int8.onnx; prints the model and
    tokenizer paths.

    \b
    Examples:
      laya-cases export-onnx --out onnx --int8
      laya-cases run data/support.jsonl --onnx onnx/model.int8.onnx
    """
    if out.exists() and not out.is_dir():
        fail("--out %s exists and is not a directory" % out)
    from laya_cases.onnx_export import export

    try:
        meta = export(str(out), int8=int8)
    except OSError as exc:
        fail("cannot write the export to %s: %s" % (out, exc.strerror or exc))
    for name in meta["files"]:
        console.out(str(out / name))
