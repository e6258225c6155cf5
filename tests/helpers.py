"""Shared test helpers: spec fixture records -> answers rows, the reference as an oracle, the CLI."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Union

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAYA_CASES_SHARED", ROOT.parent / "shared"))
#: The spec's worked-example vectors (T3.x, T5.2, T6.3), kept with the tests so a fresh clone runs them;
#: tests/fixtures/spec/README.md says what each file is. Third-party data stays in ../shared/data.
SPEC_FIXTURES = ROOT / "tests" / "fixtures" / "spec"
SHARED_DATA_HINT = ("needs the stored test data: put the project's shared/ folder beside this clone "
                    "(../shared/data) or set LAYA_CASES_SHARED=/path/to/shared")
#: A bound for polling a child process on a loaded 2-core machine, never a timing claim.
WAIT_DEADLINE_S = 180.0

#: The gate policy of worked example T6.2 (semantics.md), on the ties.json candidate.
T62_RULES = [
    {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "min": 0.6},
    {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 5, "min": 0.1},
    {"slice": {"qid": "urgency"}, "metric": "ece", "min_count": 1, "max": 0.5},
    {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.25},
    {"slice": {"language": "en"}, "metric": "choice_accuracy", "min_count": 1, "max_drop": 0.2},
    {"slice": {"language": "en"}, "metric": "ece", "min_count": 6, "max": 0.5},
    {"slice": {"language": "en"}, "metric": "ece", "min_count": 7, "max": 0.5},
]


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data (third-party data, never copied into the repository)."""
    return SHARED.joinpath("data", *parts)


def require_shared_data(*parts: str) -> Path:
    """Inside a fixture or test: the path of ../shared/data/<parts>; skips with the one-line hint when it
    is absent (fails under CI=true, like needs_shared_data)."""
    import pytest

    path = shared_data(*parts)
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but %s is missing: %s" % (path, SHARED_DATA_HINT))
        pytest.skip(SHARED_DATA_HINT)
    return path


def needs_shared_data(*parts: str):
    """Skip (one line saying how to get it) when ../shared/data/<parts> is absent. Under CI=true the data is
    always beside the clone, so there a missing folder fails the test instead of skipping it."""
    import functools

    import pytest

    missing = not shared_data(*parts).exists()
    if missing and os.environ.get("CI") == "true":
        def failing(test):
            @functools.wraps(test)
            def wrapper(*args, **kwargs):
                pytest.fail("CI=true but %s is missing: %s" % (shared_data(*parts), SHARED_DATA_HINT))
            return wrapper
        return failing
    return pytest.mark.skipif(missing, reason=SHARED_DATA_HINT)

_ANSWER_FIELDS = ("noul", "score", "answer_confidence", "confidence", "probabilities")


def record_to_row(i: int, rec: Dict[str, Any]) -> Dict[str, Any]:
    """A spec fixture record (qid, qtype, gold, pred, ...) as one answers-file row."""
    qid, qtype = rec["qid"], rec["qtype"]
    answer: Dict[str, Any] = {"type": qtype}
    if "pred" in rec:
        answer["choice" if qtype == "choice" else "score"] = rec["pred"]
    for key in _ANSWER_FIELDS:
        if key in rec:
            answer[key] = rec[key]
    body = {"type": qtype, "instructions": "q"}
    if qtype == "choice":
        body["criteria"] = ["a", "b"]
    elif qtype == "score":
        body["criteria"] = ["low", "mid", "high"]
    row: Dict[str, Any] = {"state": "case %d" % i, "questions": {qid: body},
                           "expected": {qid: rec["gold"]} if "gold" in rec else {},
                           "answers": {qid: answer}}
    for key in ("language", "model", "tags"):
        if key in rec:
            row[key] = rec[key]
    return row


def write_jsonl(path: Path, rows: List[Dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def fixture_rows(name: str) -> List[Dict[str, Any]]:
    records = json.loads((SPEC_FIXTURES / name).read_text())
    return [record_to_row(i, r) for i, r in enumerate(records)]


def cli(*args: str, env: Dict[str, str] | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """Run the installed console entry point as a user would."""
    proc = subprocess.run([sys.executable, "-m", "laya_cases_cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=str(ROOT))
    if check and proc.returncode != 0:
        raise AssertionError("laya-cases %s failed (%d): %s" % (" ".join(args), proc.returncode, proc.stderr))
    return proc


def snapshot_tree(root: Path) -> Dict[str, Any]:
    """Every path under root -> ("dir",) or (size, sha256): equal snapshots mean an untouched store."""
    import hashlib

    out: Dict[str, Any] = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_dir():
            out[rel] = ("dir",)
        else:
            data = path.read_bytes()
            out[rel] = (len(data), hashlib.sha256(data).hexdigest())
    return out


def flipped_support_answers(path: Path) -> Path:
    """data/support.answers.jsonl with every third row's choice answer moved to another option: a second
    run of the bundled dataset whose flips a diff can show."""
    lines = []
    answers = ROOT / "data" / "support.answers.jsonl"
    for i, line in enumerate(answers.read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.startswith("#"):
            continue
        row = json.loads(line)
        if i % 3 == 0:
            for answer in row["answers"].values():
                if answer.get("type") == "choice":
                    options = sorted(answer.get("probabilities") or [answer["choice"]])
                    answer["choice"] = next((o for o in options if o != answer["choice"]), answer["choice"])
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def exited_before(proc: subprocess.Popen, what: str) -> AssertionError:
    """The failure of a wait whose watched process exited first, with its stderr."""
    _, err = proc.communicate()
    return AssertionError("process exited (rc %s) before %s: %s" % (proc.returncode, what, err))


def wait_for(condition: Callable[[], bool], procs: Union[subprocess.Popen, Sequence[subprocess.Popen]],
             what: str) -> None:
    """Poll until condition() holds; fail early (with its stderr) if a watched process exits first. The
    pause between polls is a wait on the processes themselves, so an exit is seen at once."""
    import time

    procs = [procs] if isinstance(procs, subprocess.Popen) else list(procs)
    deadline = time.monotonic() + WAIT_DEADLINE_S
    while not condition():
        for proc in procs:
            try:
                proc.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                continue
            if not condition():
                raise exited_before(proc, what)
        if time.monotonic() > deadline:
            raise AssertionError("gave up waiting for %s" % what)


def last_bit_rows() -> List[Dict[str, Any]]:
    """400 answers rows (one choice question, 4-decimal confidences, seeded) whose ece, brier and aurc,
    summed in case order as the reference sums them, differ from the exactly rounded sums in the last
    bit: the data of the tests that a reference baseline still passes at tolerance 0."""
    import random

    rng = random.Random(11)
    labels = ["a", "b", "c", "d"]
    body = {"intent": {"type": "choice", "instructions": "pick", "criteria": labels}}
    rows = []
    for i in range(400):
        gold, p = rng.choice(labels), round(rng.uniform(0.25, 1.0), 4)
        pred = gold if rng.random() < p else rng.choice(labels)
        rows.append({"state": "s%d" % i, "questions": body, "expected": {"intent": gold},
                     "answers": {"intent": {"type": "choice", "choice": pred, "answer_confidence": p}}})
    return rows


def same_value(a: Any, b: Any) -> bool:
    """Equal values of equal types; floats bit for bit (NaN equals NaN, -0.0 is not 0.0), lists item by item."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def stored_run(wh: Any, run_id: str):
    """What a committed run stores: its decision rows (one table), their Parquet row-group sizes, its runs row
    (less run_id and created_at) and its slice sets."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = wh.case_files(run_id)
    cases = pa.concat_tables([pq.read_table(str(p)) for p in files]) if files else None
    layout = [[pq.ParquetFile(str(p)).metadata.row_group(i).num_rows
               for i in range(pq.ParquetFile(str(p)).metadata.num_row_groups)] for p in files]
    run = pq.read_table(str(wh.run_file(run_id))).drop(["run_id", "created_at"]).to_pylist()
    sets = pa.concat_tables([pq.read_table(str(p)) for p in wh.slice_set_files(run_id)]).to_pylist()
    return cases, layout, run, sets


def end_spark() -> None:
    """Stop this process's Spark session and end its JVM. A test worker goes on to run other files: a JVM
    left behind kept a core busy (GC, heartbeats) for the rest of the suite, and its py4j threads lived on
    in the worker. pyspark keeps the gateway for a later session, so the JVM is ended here: it exits when
    its stdin closes (PythonGatewayServer), and the next getOrCreate launches a new one."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    for spark in {SparkSession.getActiveSession(), SparkSession._instantiatedSession} - {None}:
        spark.stop()
    gateway, SparkContext._gateway, SparkContext._jvm = SparkContext._gateway, None, None
    if gateway is None:
        return
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
