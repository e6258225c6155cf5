"""`laya-cases massive dataset` (write a sampled MASSIVE dataset) and `laya-cases massive run` (the
per-language harness: one run, per-language lines, the macro summary; docs/massive.md)."""
from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases_cli import console
from laya_cases_cli.app import _App, app, output_file, warehouse_of, write_text
from laya_cases_cli.options import COMMIT_EVERY, RESUME, WAREHOUSE, resumed_id

massive_app = _App(help="MASSIVE intent classification per language: write a sampled "
                        "dataset, or run the per-language harness (docs/massive.md).\n\n\b\nExamples:\n"
                        "  laya-cases massive run --model minilm --langs en,de,fr --per-lang 50 --data DIR\n"
                        "  laya-cases massive dataset de-DE --rows 200 --out de.jsonl --data DIR",
                   no_args_is_help=True,
                   add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
app.add_typer(massive_app, name="massive", short_help="The per-language MASSIVE harness and its datasets.")

_DATA_HELP = ("Folder of per-locale MASSIVE JSON Lines files (<locale>.jsonl: id, text, label), read through "
              "Hugging Face datasets [default: mteb/amazon_massive_intent from the Hub].")


@massive_app.command("dataset")
def dataset_command(
    locale: str = typer.Argument(..., metavar="LOCALE", help="MASSIVE locale or code, e.g. en-US, de-DE, de, zh-CN."),
    rows: Optional[int] = typer.Option(100, "--rows", metavar="N", help="First N rows of the test file; "
                                       "0 for all."),
    skip: int = typer.Option(0, "--skip", metavar="N", help="Leave out the first N rows (still sampled, so a "
                             "row gets the options it has in a longer dataset): --skip 500 --rows 500 is rows "
                             "501-1000."),
    options: int = typer.Option(20, "--options", metavar="K", help="Options per row, gold included; 0: every intent "
                                 "in sorted order, the same question on every row (rows batch)."),
    seed: int = typer.Option(13, "--seed", metavar="S", help="Sampling seed (a fresh random.Random(seed) per locale)."),
    out: Path = typer.Option(..., "--out", metavar="FILE", help="Where to write the dataset (JSON Lines)."),
    source: Optional[Path] = typer.Option(None, "--source", "--data", metavar="PATH",
                                          help="MASSIVE test folder or one <locale>.jsonl. " + _DATA_HELP),
) -> None:
    """Write a MASSIVE intent dataset (one choice question per row).

    Reads LOCALE's MASSIVE test split and writes --out: each row asks which of K intents the
    utterance has, the options sampled as the laya harness samples them; rows carry
    `language` (the short code) and `item_id` (the MASSIVE id).

    \b
    Example:
      laya-cases massive dataset de-DE --rows 200 --out de.jsonl --data massive/test
    """
    from laya_cases.harness.massive import sampler as massive

    if rows is not None and rows < 0:
        raise UsageError("--rows must be >= 0, got %d" % rows)
    if options < 0:
        raise UsageError("--options must be >= 0 (0: every intent), got %d" % options)
    if skip < 0:
        raise UsageError("--skip must be >= 0, got %d" % skip)
    try:
        with output_file(out) as target:
            n = massive.write(locale, target, n_rows=rows or None, n_opts=options, seed=seed, source=source,
                             skip=skip)
    except OSError as exc:
        raise UsageError("cannot write %r: %s" % (str(out), exc)) from None
    console.out("%d examples written to %s" % (n, out))


def _num(value: Any) -> str:
    return "-" if value is None else "%.4f" % value


def language_line(lang: str, block: Dict[str, Any]) -> str:
    if "error" in block:
        return "%-6s error: %s" % (lang, block["error"])
    if not block.get("n"):
        return "%-6s n=0" % lang
    seconds = "" if block.get("seconds") is None else " (%.1fs)" % block["seconds"]
    straddle = " straddle" if block.get("acc_at_50_tie_straddle") else ""
    return ("%-6s n=%d acc=%s macro_f1=%s ece=%s conf=%s acc@50=%s%s%s"
            % (lang, block["n"], _num(block["accuracy"]), _num(block["macro_f1"]), _num(block["ece"]),
               _num(block["mean_confidence"]), _num(block["acc_at_50_coverage"]), straddle, seconds))


def summary_line(summary: Dict[str, Any]) -> str:
    """The research harness's own macro line (laya_eval.py), so its logs and ours read alike."""
    return ("macro over %d languages: acc=%s  ece=%s  f1=%s"
            % (summary["languages"], _num(summary["macro_accuracy"]), _num(summary["macro_ece"]),
               _num(summary["macro_f1"])))


def markdown(doc: Dict[str, Any]) -> str:
    head = ["lang", "n", "accuracy", "macro_f1", "ece", "mean_confidence", "acc_at_50_coverage",
            "acc_at_50_tie_straddle", "selective_accuracy@50", "temperature"]
    lines = ["| %s |" % " | ".join(head), "|%s" % ("---|" * len(head))]
    for lang, block in doc["report"].items():
        cells = [lang] + [("error: %s" % block["error"]) if "error" in block and k == "n" else
                          "" if block.get(k) is None else str(block[k]) for k in head[1:]]
        lines.append("| %s |" % " | ".join(cells))
    s = doc["summary"]
    lines += ["", "macro over %d languages: accuracy %s, macro_f1 %s, ece %s"
              % (s["languages"], s["macro_accuracy"], s["macro_f1"], s["macro_ece"]), ""]
    return "\n".join(lines)


def print_document(doc: Dict[str, Any]) -> None:
    for lang, block in doc["report"].items():
        console.out(language_line(lang, block))
    console.out(summary_line(doc["summary"]))


@massive_app.command("run")
def run_command(
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="minilm, use-multilingual, a Laya "
                                        "checkpoint directory or hub id, or a model for --runner [default: minilm]."),
    langs: str = typer.Option("en", "--langs", metavar="L,L,...|all", help="Languages by short code (en, de, "
                              "zh-CN) or locale (en-US); all: the 51 mteb languages."),
    per_lang: int = typer.Option(100, "--per-lang", metavar="N", help="First N test rows per language."),
    n_opts: int = typer.Option(20, "--n-opts", metavar="K", help="Options per case, gold included."),
    seed: int = typer.Option(13, "--seed", metavar="S", help="A fresh random.Random(S) per language."),
    data: Optional[Path] = typer.Option(None, "--data", metavar="DIR", help=_DATA_HELP),
    unclamped: bool = typer.Option(False, "--unclamped", help="Laya checkpoints: the raw bucket temperatures "
                                   "instead of the served, clamped ones."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="NAME", help="Pick the runner by name and "
                                         "give it --model as its model."),
    onnx: Optional[Path] = typer.Option(None, "--onnx", metavar="PATH", help="Score with this exported ONNX graph."),
    subfolder: Optional[str] = typer.Option(None, "--subfolder", metavar="DIR", help="Laya checkpoints: the "
                                            "checkpoint's subfolder."),
    runner_option: Optional[List[str]] = typer.Option(None, "--runner-option", metavar="KEY=VALUE",
                                                      help="Extra runner constructor option (repeatable)."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="Rows per runner call "
                                             "when consecutive rows share their questions."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runner supports."),
    on_error: str = typer.Option("fail", "--on-error", metavar="fail|skip", help="skip: a failed row is an error "
                                 "record and its language reports {\"error\": ...}."),
    resume: Optional[str] = RESUME,
    commit_every: Optional[int] = COMMIT_EVERY,
    json_out: Optional[Path] = typer.Option(None, "--json", "--out", metavar="FILE", help="Write the harness "
                                            "document (config, report, summary, cases) here; `-`: to stdout "
                                            "(--out: the research harness's name for it)."),
    no_cases: bool = typer.Option(False, "--no-cases", help="Leave the per-case records out of the document "
                                  "(a smaller file, as the research harness's --no-cases)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE", help="Write the per-language "
                                                "table as Markdown here."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Run a model over MASSIVE per language: one committed run, one line per language, the macro line.

    Every language's decisions are rows of one run (the slice `language`, rows joinable across
    languages on `item_id`); the per-language numbers are SQL over that run (sql/massive/), so
    `laya-cases report RUN --slice language` gives the same accuracies.

    \b
    Examples:
      laya-cases massive run --model minilm --langs en,de,fr --per-lang 50 --data massive/test
      laya-cases massive run --model ckpt/ --langs all --unclamped --json massive.json
    """
    from laya_cases.harness.massive import document, harness as H
    from laya_cases.run.inference import RunnerCrash
    from laya_cases.run.options import RunOptions
    from laya_cases.run.flags import runner_options_from_flags
    from laya_cases_cli.progress import RowProgress
    from laya_cases.harness.massive.data import parse_langs

    spec = H.Harness(langs=parse_langs(langs), per_lang=per_lang, n_opts=n_opts, seed=seed, data=data)
    runner, extra = runner_options_from_flags(runner, runner_option, onnx=onnx, unclamped=unclamped,
                                              subfolder=subfolder)
    opts = RunOptions(dataset="", model=model, batch_size=batch_size, on_error=on_error, device=device,
                      run_id=resumed_id(run_id, resume), runner_options=extra, runner=runner,
                      resume=resume is not None, commit_every=commit_every)
    wh = warehouse_of(warehouse)
    try:
        with RowProgress("massive", waiting="reading MASSIVE and loading the model") as bar:
            recorded = H.run_harness(wh, opts, spec, progress=bar.update, on_loaded=bar.set_total)
    except RunnerCrash as crash:
        traceback.print_exception(type(crash.exc), crash.exc, crash.exc.__traceback__)
        console.note(str(crash))
        raise typer.Exit(1)
    console.committed(recorded.run_id, wh.root, recorded.n_errors)
    doc = document.build(wh, recorded.run_id)
    if no_cases:
        doc["cases"] = []
    print_document(doc)                       # not printed when an output is `-` (stdout is that file's)
    write_text(json_out, json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "harness document")
    write_text(markdown_out, markdown(doc), "markdown table")


@massive_app.command("report")
def report_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="A run whose cases have a language (a `massive run`, "
                                 "an imported harness document, or any choice-question run)."),
    json_out: Optional[Path] = typer.Option(None, "--json", "--out", metavar="FILE", help="Write the harness "
                                            "document here (--out: the research harness's name for it)."),
    markdown_out: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE", help="Write the per-language "
                                                "table as Markdown here."),
    no_cases: bool = typer.Option(False, "--no-cases", help="Leave the per-case records out of the document."),
    regime: Optional[str] = typer.Option(None, "--regime", metavar="clamped|unclamped", help="Re-derive every "
                                         "number from the stored raw logits under the served (clamped) or raw "
                                         "(unclamped) temperatures, with no model (Laya checkpoint runs)."),
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Print a committed run's per-language harness lines and macro line from the store.

    \b
    Examples:
      laya-cases massive report RUN
      laya-cases massive report RUN --regime unclamped
    """
    from laya_cases.harness.massive import document

    wh = warehouse_of(warehouse)
    if not wh.has_run(run_id):
        raise UsageError("unknown run %r in warehouse %s (see `laya-cases runs`)" % (run_id, wh.root))
    doc = document.build(wh, run_id, regime=regime)
    if no_cases:
        doc["cases"] = []
    print_document(doc)
    write_text(json_out, json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "harness document")
    write_text(markdown_out, markdown(doc), "markdown table")
