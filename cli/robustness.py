"""The `robustness` command: variants of every case as one run (DATASET), or a committed one again (--run).
Library: laya_cases/harness/robustness/. Exit 0 ok, 1 a language failed or a policy rule failed, 2 a usage error."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of, write_text
from laya_cases_cli.options import COMMIT_EVERY, RESUME, WAREHOUSE, resumed_id

_JSON = typer.Option(None, "--json", "--out", metavar="FILE", help="Write the robustness document here (strict "
                     "JSON; --out: the metamorphic harness's name for it).")
_MASSIVE = "Over MASSIVE (with --langs): "
_MARKDOWN = typer.Option(None, "--markdown", metavar="FILE", help="Write the tables as Markdown here.")
_POLICY = typer.Option(None, "--gate-policy", metavar="FILE", help="Fail (exit 1) unless every rule holds, e.g. "
                       "option_order.semantic_agreement_rate >= 0.9 per language (docs/robustness.md).")


def _emit(wh, run_id: str, policy, json_out: Optional[Path], markdown_out: Optional[Path]) -> None:
    from laya_cases.harness.robustness.render import markdown, text_lines
    from laya_cases.harness.robustness.report import build
    from laya_cases.harness.robustness.summary import strict_json

    doc, failures = build(wh, run_id, policy)
    for line in text_lines(doc):
        console.out(line)
    write_text(json_out, strict_json(doc), "robustness JSON")
    write_text(markdown_out, markdown(doc), "robustness markdown")
    console.failures(failures)
    if failures:
        raise typer.Exit(1)


@app.command("robustness")
def robustness_command(
    dataset: Optional[Path] = typer.Argument(None, metavar="DATASET", help="Labelled dataset: one choice "
                                             "question per row (e.g. from `laya-cases massive dataset`)."),
    langs: Optional[str] = typer.Option(None, "--langs", metavar="L,L,...|all", help="Instead of DATASET: "
                                        "MASSIVE languages, sampled in-process as `massive run` samples them "
                                        "(the metamorphic harness's command line; docs/robustness.md)."),
    per_lang: Optional[int] = typer.Option(None, "--per-lang", metavar="N", help=_MASSIVE + "first N test rows "
                                           "per language [default: 100]."),
    n_opts: Optional[int] = typer.Option(None, "--n-opts", metavar="K", help=_MASSIVE + "options per case, gold "
                                         "included [default: 20]."),
    data: Optional[Path] = typer.Option(None, "--data", metavar="DIR", help=_MASSIVE + "folder of per-locale "
                                        "<locale>.jsonl files [default: mteb/amazon_massive_intent from the Hub]."),
    run: Optional[str] = typer.Option(None, "--run", metavar="RUN", help="Instead of DATASET: print a committed "
                                      "robustness run again, from the store (no model)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="M", help="As for `run` [default: minilm]."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="NAME", help="Pick the runner by name."),
    seed: int = typer.Option(13, "--seed", metavar="S", help="Variant seed: a fresh random.Random(S) per language "
                             "(docs/robustness.md); with --langs also MASSIVE's sampling seed."),
    run_id: Optional[str] = typer.Option(None, "--run-id", metavar="ID", help="Run id [default: <UTC time>-<random>]."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="Rows per call when "
                                             "consecutive presented questions are the same."),
    device: Optional[str] = typer.Option(None, "--device", metavar="D", help="cpu, cuda, ... as the runner supports."),
    revision: Optional[str] = typer.Option(None, "--revision", metavar="SHA", help="Pin the checkpoint revision."),
    runner_option: Optional[List[str]] = typer.Option(None, "--runner-option", metavar="KEY=VALUE",
                                                      help="Extra runner constructor option (repeatable)."),
    subfolder: Optional[str] = typer.Option(None, "--subfolder", metavar="DIR", help="Laya checkpoints: the "
                                            "checkpoint's subfolder."),
    unclamped: bool = typer.Option(False, "--unclamped", help="Laya checkpoints: the raw bucket temperatures "
                                   "instead of the served, clamped ones."),
    resume: Optional[str] = RESUME,
    commit_every: Optional[int] = COMMIT_EVERY,
    json_out: Optional[Path] = _JSON,
    markdown_out: Optional[Path] = _MARKDOWN,
    gate_policy: Optional[Path] = _POLICY,
    warehouse: Optional[Path] = WAREHOUSE,
) -> None:
    """Ask each case three ways: agreement and drift per kind.

    Each case is asked as written, with its options shuffled (option_order) and with its keys
    renamed A, B, ... (label_rename); every answer is a decision row of one run, in canonical
    option order, linked to its baseline case. The summary (agreement, probability
    drift, JS divergence, confidence drift, accuracy and ECE per kind, per language) is SQL over
    those rows; `--run RUN` prints it again from the store. `report RUN` reports the baseline rows.

    \b
    Examples:
      laya-cases massive dataset en-US --rows 200 --out en.jsonl --data shared/data/massive/test
      laya-cases robustness en.jsonl --model minilm --run-id rob-en --json rob-en.json
      laya-cases robustness --model ckpt/ --langs en,de --per-lang 100 --data DIR --out rob.json
      laya-cases robustness --run rob-en --gate-policy robustness-policy.json
    """
    from laya_cases.core.errors import UsageError
    from laya_cases.harness.robustness import gate as G

    if sum(x is not None for x in (dataset, run, langs)) != 1:
        raise UsageError("robustness needs a DATASET to run, --langs L,... to run over MASSIVE, or --run RUN to "
                         "print a committed run (one of them)")
    if langs is None:
        given = [f for f, v in (("--per-lang", per_lang), ("--n-opts", n_opts), ("--data", data)) if v is not None]
        if given:
            raise UsageError("%s: only with --langs (the MASSIVE sample)" % ", ".join(given))
    if run is not None and resume is not None:
        raise UsageError("--resume continues a run of DATASET; --run RUN prints a committed one")
    policy = G.load(str(gate_policy)) if gate_policy else None      # checked before any model loads
    wh = warehouse_of(warehouse)
    if run is None:
        sample = _massive(langs, per_lang, n_opts, seed, data) if langs is not None else None
        run = _execute(wh, str(dataset) if dataset is not None else sample.name, model=model, runner=runner,
                       seed=seed, run_id=resumed_id(run_id, resume), batch_size=batch_size, device=device,
                       revision=revision, runner_option=runner_option, resume=resume is not None,
                       commit_every=commit_every, sample=sample, subfolder=subfolder, unclamped=unclamped)
    _emit(wh, run, policy, json_out, markdown_out)


def _massive(langs: str, per_lang: Optional[int], n_opts: Optional[int], seed: int, data: Optional[Path]):
    """The MASSIVE sample of `massive run` (its sampler, its data reader, its config block) as the rows of a
    robustness run: the metamorphic harness builds its cases with the per-language harness's build_suite."""
    from laya_cases.harness.massive import data as massive_data, harness as H
    from laya_cases.harness.robustness.execute import Sample

    given = {k: v for k, v in (("per_lang", per_lang), ("n_opts", n_opts)) if v is not None}
    spec = H.Harness(langs=massive_data.parse_langs(langs), seed=seed, data=data, **given)   # else massive's defaults
    spec.check()

    def read():
        rows, sources = H.build_rows(spec)
        return rows, spec.config(sources)

    return Sample(name=massive_data.describe(data)[0], source="massive:%s" % ",".join(spec.langs), key="massive",
                  read=read)


def _execute(wh, dataset: str, *, runner_option, subfolder, unclamped, **options) -> str:
    from laya_cases_cli.progress import RowProgress
    from laya_cases.harness.robustness.execute import RobustnessOptions, execute
    from laya_cases.run.flags import runner_options_from_flags

    runner, extra = runner_options_from_flags(options.pop("runner"), runner_option, unclamped=unclamped,
                                              subfolder=subfolder)
    opts = RobustnessOptions(dataset=dataset, runner=runner, runner_options=extra, **options)
    with RowProgress("robustness", waiting="loading the model") as bar:
        recorded = execute(wh, opts, progress=bar.update, on_loaded=bar.set_total)
    console.committed(recorded.run_id, wh.root, recorded.n_errors)
    return recorded.run_id
