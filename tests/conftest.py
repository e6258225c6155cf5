import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))      # tests import helpers, doubles, ...
#: The test files live in one folder per wing (tests/store/, tests/query/, ...) and some share fixtures and
#: doubles across folders (`from test_bad_input import run_cli`): every folder holding test files is on the
#: path too, so their names (unique across folders) import from anywhere, in any order.
sys.path[1:1] = [str(folder) for folder in sorted(TESTS.iterdir()) if any(folder.glob("test_*.py"))]

#: The footer check's verdict cache (laya_cases/store/verdicts.py) in a folder of this session, not ~/.cache.
os.environ.setdefault("LAYA_CASES_CHECK_CACHE", __import__("tempfile").mkdtemp(prefix="laya-checks-"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # The workers share the cores: one OpenMP thread per torch model, or each worker's idle OpenMP threads
    # spin on the cores the other worker needs (the SmolLM2 test used 45 s of CPU with two threads, 35 s
    # with one). Set before any test module imports torch; a serial run keeps torch's default.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _memoize_typer_commands() -> None:
    """typer's CliRunner.invoke rebuilds the whole click command tree from the app on every call (about
    40 ms with two dozen commands; most of a CLI test's time). The tree depends only on what is
    registered, so the tests build it once per app and registration state."""
    import typer.testing

    build, built = typer.testing._get_command, {}

    def cached(app):
        key = (id(app), len(app.registered_commands), len(app.registered_groups))
        if key not in built:
            built[key] = build(app)
        return built[key]

    typer.testing._get_command = cached


_memoize_typer_commands()


#: Under pytest-xdist (`-n auto --dist loadfile`, the README's command) these files are handed out first,
#: longest first: one started last would run alone at the end (test_spark.py, alphabetically late, did).
#: Slow tests are marked in their modules (`pytestmark = pytest.mark.slow`, `@pytest.mark.slow`), not here.
LONGEST_FILES = ["test_spark.py", "test_causal_choice.py", "test_golden.py", "test_ingest_bulk.py",
                 "test_objstore.py", "test_shard.py", "test_differential.py", "test_relevance.py",
                 "test_resume.py", "test_bad_input.py"]


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):        # a serial run keeps the files' order
        rank = {name: i for i, name in enumerate(LONGEST_FILES)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
