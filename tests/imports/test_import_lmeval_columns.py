"""The column-wise lm-eval import (laya_cases/imports/lmeval_columns.py) stores exactly what the per-row
import stores, and falls back to it for every line it does not read alike.

Each log is imported twice: column-wise allowed, and column-wise refused (the per-row path alone); the two
runs are compared cell by cell (every decision column, the run row with its identity, the slice sets, the
Parquet row groups). A log the per-row path refuses must give the same one error either way. The seeded
generator writes lm-eval --log_samples lines with every reading of a target, ties, -0.0 and subnormal
log-likelihoods, duplicate and empty choices, delimiters, mutual-information halves, doc languages, item
ids, filters, escapes, other spellings and blank lines; `hostile` adds the values the column-wise reader
must leave to the per-row path. Clean logs must really be read column-wise (so a reader that always falls
back fails here).
"""
from __future__ import annotations

import json
import math
import random
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from helpers import ROOT, same_value, stored_run
from laya_cases.core.errors import UsageError
from laya_cases.imports import import_path, lmeval_columns
from laya_cases.record.ingest.blocks import Fallback
from laya_cases.store.warehouse import Warehouse

LOGS = ROOT / "tests" / "fixtures" / "imports" / "lmeval"


def import_both(tmp_path: Path, path: Path, **options: Any) -> Optional[str]:
    """Import `path` column-wise and row by row (two warehouses: a re-import of the same files is
    recognised), assert every stored cell agrees; returns None, or the one error both gave. Sets
    `import_both.columnwise` to the runs read column-wise."""
    original = lmeval_columns.Columnwise.record
    done: List[int] = []

    def counted(self, recorder, progress=None):
        original(self, recorder, progress)
        done.append(recorder.n_rows)

    def refused(self, recorder, progress=None):
        raise Fallback("refused by the test")

    outcomes = []
    for prefix, record in (("col", counted), ("row", refused)):
        lmeval_columns.Columnwise.record = record
        try:
            outcomes.append(import_path(Warehouse(str(tmp_path / prefix)), str(path), run_id="r", **options))
        except UsageError as exc:
            outcomes.append(str(exc))
        finally:
            lmeval_columns.Columnwise.record = original
    import_both.columnwise = len(done)
    col, row = outcomes
    if isinstance(row, str) or isinstance(col, str):
        assert col == row
        return row
    assert [r.n_cases for r in col] == [r.n_cases for r in row]
    for a, b in zip(col, row):
        _compare(Warehouse(str(tmp_path / "col")), Warehouse(str(tmp_path / "row")), a.run_id)
    return None


def _compare(wh_a: Warehouse, wh_b: Warehouse, run_id: str) -> None:
    (cases_a, layout_a, run_a_row, sets_a), (cases_b, layout_b, run_b_row, sets_b) = stored_run(wh_a, run_id), stored_run(wh_b, run_id)
    assert run_a_row == run_b_row and sets_a == sets_b and layout_a == layout_b
    assert cases_a.schema == cases_b.schema and cases_a.num_rows == cases_b.num_rows
    for name in cases_b.column_names:
        a, b = cases_a.column(name).to_pylist(), cases_b.column(name).to_pylist()
        bad = [i for i in range(len(a)) if not same_value(a[i], b[i])]
        assert not bad, "%s differs at row %d: %r vs %r" % (name, bad[0], a[bad[0]], b[bad[0]])


# ------------------------------------------------------------------------------- real logs
def _mc_only(tmp_path: Path, seed: str) -> Path:
    """A copy of a real lm-eval log without its generation task (a generate_until task is read row by row)."""
    folder = tmp_path / seed
    shutil.copytree(LOGS / seed, folder)
    for path in folder.glob("samples_banking77_gen_*.jsonl"):
        path.unlink()
    return folder


@pytest.mark.parametrize("norm", ["raw", "chars", "bytes"])
@pytest.mark.parametrize("seed", ["gpt2-random-seed1", "gpt2-random-seed2"])
def test_real_logs_store_the_same_cells_column_wise(tmp_path, seed, norm):
    assert import_both(tmp_path, _mc_only(tmp_path, seed), norm=norm) is None
    assert import_both.columnwise == 1


@pytest.mark.parametrize("seed", ["gpt2-random-seed1", "gpt2-random-seed2"])
def test_real_logs_with_a_generation_task_store_the_same_cells_column_wise(tmp_path, seed):
    assert import_both(tmp_path, LOGS / seed) is None
    assert import_both.columnwise == 1


def test_another_output_type_sends_the_run_row_by_row(tmp_path):
    folder = tmp_path / "log"
    shutil.copytree(LOGS / "gpt2-random-seed1", folder)
    results = next(folder.glob("results_*.json"))
    doc = json.loads(results.read_text(encoding="utf-8"))
    doc["configs"]["banking77_gen"]["output_type"] = "loglikelihood"
    results.write_text(json.dumps(doc), encoding="utf-8")
    assert "output_type 'loglikelihood'" in import_both(tmp_path, folder)
    assert import_both.columnwise == 0


def test_progress_counts_the_rows_read_column_wise(tmp_path, monkeypatch):
    """The CLI's bar: after each block the rows read so far (over every run of the path), and the total last."""
    monkeypatch.setattr(lmeval_columns, "BLOCK_BYTES", 16000)       # a block of about ten lines
    seen: List[int] = []
    [result] = import_path(Warehouse(str(tmp_path / "wh")), str(_mc_only(tmp_path, "gpt2-random-seed1")),
                           progress=seen.append)
    assert seen[-1] == result.n_cases == 150
    assert seen == sorted(seen) and len(set(seen)) > 5


def test_item_ids_from_a_doc_field(tmp_path):
    assert import_both(tmp_path, _mc_only(tmp_path, "gpt2-random-seed1"), item_id="id") is None
    assert import_both.columnwise == 1


# ------------------------------------------------------------------------------- generated logs
CHOICES = ["refund", "card arrival", "caf\u00e9", "na\u00efve \u2603", "\U0001F600 emoji", "a, b: c", 'quote " \\ slash',
           "line\nbreak", "tab\tctl\x01", "0", "1", "B", "", "refund"]
DELIMITERS = [" ", "", "\n", "\u2192 "]
DOC_VALUES = [1.5, 1e-07, 12345678901234567, "x\u00e9\n", [1, {"k": None}], {"nested": {"a": 1e22}}, True, None]


def _ll(rng: random.Random, hostile: bool) -> str:
    pick = rng.random()
    if hostile and pick < 0.04:
        return rng.choice([" -1.5", "nan", "inf", "1_000", "-1e400", "\u0661", "--2", "1e5000"])
    if pick < 0.08:
        return rng.choice(["-0.0", "0", "0.0", "-5e-324", "-2.2250738585072014e-308", "-1e-320"])
    value = -abs(rng.gauss(0, 40)) * rng.choice([1, 1, 1e-3, 1e3])
    return rng.choice([repr(value), "%.8e" % value, "%.3f" % value, repr(round(value, 1))])


def _target(rng: random.Random, choices: List[str], hostile: bool) -> Any:
    n = len(choices)
    kinds = ["int", "digits", "letter", "text", "list", "pair"] + (["out", "minus", "float", "bool", "nested", "space"]
                                                                     if hostile else [])
    kind = rng.choice(kinds)
    i = rng.randrange(n)
    return {"int": i, "digits": str(i), "letter": chr(65 + i), "text": choices[i], "list": [i],
            "pair": [i, (i + 1) % n], "out": n + 1, "minus": "-1", "float": float(i), "bool": True,
            "nested": [[i]], "space": " %d" % i}[kind]


def _gold(target: Any, choices: List[str]) -> List[int]:
    if isinstance(target, list):
        return [g for t in target for g in _gold(t, choices)]
    if isinstance(target, int) and not isinstance(target, bool):
        return [target]
    if target in choices:
        return [choices.index(target)]
    if target.isdigit():
        return [int(target)]
    return [ord(target) - 65]


def _sample(rng: random.Random, doc_id: int, delimiter: str, norm: str, hostile: bool) -> Dict[str, Any]:
    n = rng.randint(1, 5)
    choices = [rng.choice(CHOICES) for _ in range(n)]
    lls = [_ll(rng, hostile) for _ in range(n)]
    if n > 1 and rng.random() < 0.2:
        lls[rng.randrange(n)] = lls[0]                                   # an exact tie
    doc: Dict[str, Any] = {"id": "doc-%d" % doc_id, "question": rng.choice(CHOICES)}
    for key in rng.sample(["extra", "language", "lang", "locale", "more"], rng.randint(0, 3)):
        doc[key] = (rng.choice(["de", "fr", "", 7, None]) if key in ("language", "lang", "locale")
                    else rng.choice(DOC_VALUES))
    target = _target(rng, choices, hostile)
    conts = [(delimiter if rng.random() < 0.9 else "") + c for c in choices]
    mutual = rng.random() < 0.1
    if mutual:                                                           # the unconditional half follows
        conts, lls = conts + conts, lls + [_ll(rng, False) for _ in range(n)]
    sample: Dict[str, Any] = {"doc_id": doc_id, "doc": doc, "target": target}
    if rng.random() < 0.15:
        sample["arguments"] = [["ctx %d" % doc_id, c] for c in conts]
    else:
        order = list(range(len(conts)))
        rng.shuffle(order)                                               # keys in any order: read in gen_args order
        sample["arguments"] = {"gen_args_%d" % i: {"arg_0": "ctx", "arg_1": conts[i]} for i in order}
    sample["resps"] = [[[ll, "False"]] for ll in lls]
    sample["filtered_resps"] = [[ll, "False"] for ll in lls]
    sample["filter"] = rng.choice(["none", "none", "strict-match"] + (["", 5] if hostile else []))
    if rng.random() < 0.1:
        del sample["filter"]
    try:
        read = [c[len(delimiter):] if delimiter and c.startswith(delimiter) else c for c in conts[:n]]
        size = {"raw": lambda c: 1, "chars": len, "bytes": lambda c: len(c.encode("utf-8"))}[norm]
        scores = [float(ll) / size(c) if size(c) else float(ll) for ll, c in zip(lls[:n], read)]
        pred = scores.index(max(scores))
        metric = {"raw": "acc", "chars": "acc_norm", "bytes": "acc_bytes"}[norm]
        sample[metric] = 1.0 if pred in _gold(target, read) else 0.0
        if hostile and rng.random() < 0.3:
            sample[metric] = 1.0 - sample[metric]
        if norm == "raw" and rng.random() < 0.7:
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            probs = [e / sum(exps) for e in exps]
            if hostile and rng.random() < 0.3:
                probs[0] += 1e-3
            sample["brier_score"] = [0, "[" + " ".join("%.8e" % p for p in probs) + "]"]
    except (ValueError, IndexError, TypeError, OverflowError, AttributeError):
        pass                                                             # a hostile line: the import names it
    if mutual:
        sample["acc_mutual_info"] = 0.0
    if hostile and rng.random() < 0.03:
        sample["doc_id"] = rng.choice([1.0, True, "id-%d" % doc_id, 10 ** 20, None])
    return sample


def _generation(rng: random.Random, doc_id: int, hostile: bool) -> Dict[str, Any]:
    """A generate_until line: its metrics, their values, the response (hostile: what generated_row reads
    through str() or float(), or refuses)."""
    doc: Dict[str, Any] = {"id": "doc-%d" % doc_id, "question": rng.choice(CHOICES)}
    if rng.random() < 0.3:
        doc[rng.choice(["language", "lang", "locale"])] = rng.choice(["de", "fr", ""])
    names = rng.sample(["exact_match", "f1", "bleu", "contains"], rng.randint(1, 3))
    sample: Dict[str, Any] = {"doc_id": doc_id, "doc": doc, "target": rng.choice(CHOICES),
                              "arguments": {"gen_args_0": {"arg_0": "ctx", "arg_1": {"until": ["\n"], "max_gen_toks": 4}}},
                              "resps": [[rng.choice(CHOICES)]], "metrics": names}
    sample["filtered_resps"] = rng.choice([[rng.choice(CHOICES)], [rng.choice(CHOICES), "second"], rng.choice(CHOICES)])
    sample["filter"] = rng.choice(["none", "strict-match"])
    pool = [0.0, 1.0, 0, 1, 0.5, -0.0, 1e-05, 0.3333333333333333, 2.5e-320, 7]
    for name in names:
        sample[name] = rng.choice(pool)
    if hostile:
        kind = rng.randrange(7)
        if kind == 0:
            sample[names[0]] = rng.choice([True, "1.0", None, [1.0], 10 ** 20])
        elif kind == 1:
            sample["metrics"] = rng.choice([[], None, "exact_match", [5] + names, [["nested"]] + names])
        elif kind == 2:
            sample["filtered_resps"] = rng.choice([[], [5], [["nested"]], None, 5])
        elif kind == 3:
            del sample[names[0]]
        elif kind == 4:
            sample["filter"] = 5
        elif kind == 5:
            sample["doc_id"] = rng.choice([1.5, True, None])
        else:
            sample["metrics"] = names + ["doc"]
    return sample


def _write(rng: random.Random, sample: Dict[str, Any], hostile: bool) -> str:
    style = rng.randrange(4)
    if style == 1:
        sample = dict(rng.sample(list(sample.items()), len(sample)))
    line = json.dumps(sample, ensure_ascii=style == 2, separators=(",", ":") if style == 3 else None)
    if hostile:                                         # what json.loads reads otherwise than DuckDB, or refuses
        kind = rng.randrange(6)
        if kind == 0:                                   # a repeated key: json.loads keeps the last, DuckDB the first
            line = '{"target": "A", ' + line[1:]
        elif kind == 1:
            line = '{"doc_id": 999999, ' + line[1:]
        elif kind == 2:
            line = re.sub(r'"arg_1": ?', lambda m: '"arg_1": "bogus", ' + m.group(0), line, count=1)
        elif kind == 3:
            line = re.sub(r'"doc": ?\{', lambda m: m.group(0) + '"lang": "xx", "lang": "de", ', line, count=1)
        elif kind == 4:                                 # a lone surrogate escape: json.loads reads it, UTF-8 cannot hold it
            line = line.replace('"question": "', '"question": "\\ud800', 1).replace('"question":"', '"question":"\\udc00', 1)
        else:                                           # a trailing comma: DuckDB reads it, json.loads does not
            line = line[:-1] + ",}"
    return line


def write_log(folder: Path, seed: int, tasks: List[str], rows: int, norm: str, hostile: Optional[int] = None) -> Path:
    """A results file and one samples file per task; line `hostile` of each holds values or a spelling the
    column-wise reader must leave to the per-row path (the file's other lines are clean, so only that
    line's reading decides the path)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    date = "2026-12-04T00-00-00.%06d" % seed
    configs = {}
    for task in tasks:
        delimiter = rng.choice(DELIMITERS)
        generation = task.endswith("_gen")
        configs[task] = {"output_type": "generate_until" if generation else "multiple_choice",
                         "target_delimiter": delimiter}
        lines = []
        for i in range(rows):
            spelling = i == hostile and rng.random() < 0.5          # a hostile spelling of clean values, or hostile values
            values = i == hostile and not spelling
            sample = _generation(rng, i, values) if generation else _sample(rng, i, delimiter, norm, values)
            lines.append(_write(rng, sample, spelling))
            if rng.random() < 0.03:
                lines.append(rng.choice(["", "  ", "\t"]))
        (folder / ("samples_%s_%s.jsonl" % (task, date))).write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = {"configs": configs, "lm_eval_version": "0.4.13", "model_name": "model-%d" % seed}
    (folder / ("results_%s.json" % date)).write_text(json.dumps(results), encoding="utf-8")
    return folder


TASKS = [["banking77_mc4"], ["xnli_de", "belebele_fra_Latn", "xnli_fr_gen"], ["global_mmlu_full_de_math", "mmmlu_fr_fr_law"],
         ["banking77_gen"]]


@pytest.mark.parametrize("norm", ["raw", "chars", "bytes"])
@pytest.mark.parametrize("seed", range(6))
def test_generated_logs_store_the_same_cells_column_wise(tmp_path, monkeypatch, seed, norm):
    folder = write_log(tmp_path / "log", seed, TASKS[seed % len(TASKS)], 150, norm)
    if seed == 5:                                    # blocks of a few lines: rows spread over many blocks
        monkeypatch.setattr(lmeval_columns, "BLOCK_BYTES", 20000)
    assert import_both(tmp_path, folder, norm=norm, item_id="id" if seed == 4 else None) is None
    assert import_both.columnwise == 1


def test_rows_out_of_line_order_are_put_back_in_order(tmp_path, monkeypatch):
    """The queries have no ORDER BY (DuckDB keeps an Arrow scan's order); a block whose rows came back in
    another order (here: reversed, as a double of DuckDB) is sorted by line number: the same cells."""
    original = lmeval_columns.sqlfiles.arrow

    def reversed_rows(con, name, params):
        out = original(con, name, params)
        return out.take(list(range(out.num_rows - 1, -1, -1)))
    monkeypatch.setattr(lmeval_columns.sqlfiles, "arrow", reversed_rows)
    monkeypatch.setattr(lmeval_columns, "BLOCK_BYTES", 20000)
    folder = write_log(tmp_path / "log", 7, TASKS[1], 60, "raw")
    assert import_both(tmp_path, folder) is None
    assert import_both.columnwise == 1


@pytest.mark.parametrize("seed", range(100, 180))
def test_a_hostile_line_gives_the_per_row_import_s_cells_or_error(tmp_path, seed):
    norm = ("raw", "chars", "bytes")[seed % 3]
    folder = write_log(tmp_path / "log", seed, TASKS[seed % len(TASKS)], 8, norm, hostile=seed % 8)
    import_both(tmp_path, folder, norm=norm)


def test_a_bad_log_after_a_column_wise_run_commits_nothing(tmp_path):
    """The first results set is staged column-wise; the second's bad line aborts the import: neither is
    committed, and the message is the per-row reader's, naming file, line and field."""
    logs = tmp_path / "logs"
    _mc_only(logs, "gpt2-random-seed1")
    bad = write_log(logs / "z-bad", 3, ["banking77_mc4"], 6, "raw")
    path = next(bad.glob("samples_*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    sample = json.loads(lines[2])
    sample["filtered_resps"] = "none"
    lines[2] = json.dumps(sample)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wh = Warehouse(str(tmp_path / "wh"))
    with pytest.raises(UsageError, match=r"%s:3 field 'filtered_resps'" % re.escape(str(path))):
        import_path(wh, str(logs))
    assert not wh.run_ids()


def test_a_boolean_metric_is_passed_over_column_wise_too(tmp_path):
    """generated_row scores a generation by the first numeric metric `metrics` names, a boolean not being
    one; the column-wise reader chooses alike (and so reads the run)."""
    folder = write_log(tmp_path / "log", 7, ["banking77_gen"], 5, "raw")
    path = next(folder.glob("samples_*.jsonl"))
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sample = json.loads(line)
            for name in sample["metrics"]:
                del sample[name]
            sample.update(metrics=["flag", "f1"], flag=True, f1=0.25)
            line = json.dumps(sample)
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_both(tmp_path, folder) is None
    assert import_both.columnwise == 1
