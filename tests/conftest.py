import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))      # tests import helpers, doubles, ...
#: The test files live in one folder per wing (tests/store/, tests/query/, ...) and some share fixtures and
#: doubles across folders (`from test_bad_input import run_cli`): every folder holding test files is on the
#: path too, so their names (unique across folders) import from anywhere, in any order.
sys.path[1:1] = [str(folder) for folder in sorted(TESTS.iterdir()) if any(folder.glob("test_*.py"))]

if os.environ.get("PYTEST_XDIST_WORKER"):
    # The workers share the cores: one OpenMP thread per torch model, or each worker's idle OpenMP threads
    # spin on the cores the other worker needs (the SmolLM2 test used 45 s of CPU with two threads, 35 s
    # with one). Set before any test module imports torch; a serial run keeps torch's default.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# Tests marked `slow` here (a whole file, or a test with all its parameter sets), so `pytest -m "not slow"`
# stays under a minute on two cores: neural models, the golden CLI run, the reference differential,
# subprocess crash and concurrency checks, the many-CLI-call parametrisations. Chosen from --durations
# (each entry 3 s or more in all, on a loaded two-core machine).
SLOW = {
    "tests/harness/test_crosslingual.py::test_real_multilingual_run_matches_polars",
    "tests/harness/test_robustness.py::test_minilm_robustness_on_200_massive_en_us_cases_rederives_from_the_store",
    "tests/runners/test_causal_choice.py",
    "tests/query/test_slice_sums.py::test_partial_sums_equal_the_one_pass_sums_bit_for_bit",
    "tests/harness/test_massive_models.py",
    "tests/runners/test_object_states.py::test_minilm_object_state_accuracy_equals_string_state_on_massive_held_out",
    "tests/cli/test_golden.py",
    "tests/docs/test_docs_console.py::test_the_readme_tour_prints_what_it_shows",
    "tests/api/test_api.py::test_the_python_doc_runs_as_written",
    "tests/report/test_differential.py",
    "tests/runners/test_runner_onnx.py",
    "tests/runners/test_runner_laya_agent.py",
    "tests/runners/test_runners_hf.py",
    "tests/run/test_run.py::test_use_multilingual_beats_chance_on_massive_de_de",
    "tests/run/test_run.py::test_minilm_beats_chance_on_massive_en_us",
    "tests/run/test_run.py::test_minilm_sort_by_length_changes_no_answer",
    "tests/run/test_run.py::test_cli_run_on_support_offline_is_reproduced_by_report",
    "tests/store/test_warehouse.py::test_kill_9_during_ingest_leaves_no_visible_partial_run",
    "tests/run/test_resume.py::test_sigkill_mid_run_then_resume_finishes_only_what_was_missing",
    "tests/run/test_resume.py::test_a_kill_at_every_commit_step_leaves_nothing_torn_and_resumes",   # ~20 kills
    "tests/store/test_warehouse.py::test_eight_concurrent_ingests_all_land",
    "tests/store/test_warehouse.py::test_two_concurrent_ingests_with_one_run_id_exactly_one_wins",
    "tests/store/test_warehouse.py::test_crash_between_commit_renames_is_invisible_and_gc_removes_orphan",
    "tests/store/test_warehouse.py::test_commit_over_a_torn_partition_replaces_it",
    "tests/store/test_warehouse.py::test_invalid_run_id_is_refused_and_nothing_is_written",     # 7 CLI runs
    "tests/report/test_spec_examples.py::test_s1_4_validate_failures_match_the_reference",       # ~25 CLI runs
    "tests/report/test_determinism.py::test_s9_8_row_order_and_partitioning_do_not_move_a_bit",
    "tests/views/test_plots.py::test_plot_writes_two_pngs_reproducibly",
    "tests/harness/test_relevance_differential.py",
    "tests/harness/test_relevance_models.py",
    "tests/harness/test_relevance_resume.py",
    "tests/harness/test_shortlist.py::test_minilm_shortlist_k10_on_banking77_re_derives_from_the_store",
    "tests/harness/test_presentation.py::test_laya_checkpoint_built_locally_runs_the_checks",
    "tests/views/test_plots_kinds.py::test_shortlist_recall_curve_png_is_the_stored_ranks",           # CLI runs
    "tests/views/test_plots_kinds.py::test_languages_png_bars_are_the_reports_accuracy_interval_and_ece",
    "tests/views/test_plots_kinds.py::test_robustness_png_is_agreement_per_transform_and_language",
    "tests/views/test_plots_kinds.py::test_plots_load_no_model",
    "tests/query/test_reference_order.py::test_last_bit_differences_still_pass_at_tolerance_0_without_laya",  # subprocess
    "tests/query/test_reference_order.py::test_compare_reference_doc_verdict_is_the_same_without_laya",     # subprocess
    "tests/core/test_strict.py::test_warnings_alone_do_not_fail_and_default_validate_is_unchanged",       # CLI runs
    "tests/record/test_ingest_bulk.py::test_small_blocks_and_flushes_keep_rows_order_and_row_groups",      # ~30 s
    "tests/harness/test_massive.py::test_metric_block_equals_plain_python_on_random_inputs_with_ties",       # 60 trials
    "tests/cli/test_bad_input.py",                        # 766 CLI invocations (issue 15's suite), ~20 s
    "tests/views/test_html_browser.py",                                                  # headless Chromium
    "tests/views/test_serve.py::test_cli_serve_listens_on_localhost_and_answers",        # a real server process
    "tests/query/test_spark.py",                                                         # a Spark JVM (local[2])
    "tests/run/test_shard.py::test_four_concurrent_shard_processes_equal_the_unsharded_run",   # 5 processes
    "tests/run/test_shard.py::test_the_default_model_sharded_equals_unsharded",               # minilm
    "tests/run/test_shard.py::test_more_shards_than_rows_leaves_some_empty",                  # 8 shards, ~4 s
    "tests/run/test_shard.py::test_a_kill_at_every_step_of_the_last_shard_leaves_nothing_torn_and_continues",  # kills
    "tests/store/test_objstore.py::test_ingest_report_sql_on_s3_equal_the_local_warehouse",   # CLI runs, moto S3
    "tests/store/test_objstore.py::test_local_delta_warehouse_round_trips",
    "tests/store/test_objstore.py::test_run_with_chunk_commits_on_a_delta_warehouse_equals_the_local_run",
    "tests/store/test_objstore.py::test_eight_concurrent_writers_into_s3_all_land",           # 8 writers, ~50 s
    "tests/store/test_objstore.py::test_killed_writers_leave_nothing_visible",                # kill -9 twice, ~35 s
    "tests/store/test_objstore.py::test_two_writers_of_one_run_id_exactly_one_wins",
    "tests/store/test_objstore.py::test_spark_reads_the_committed_files",                     # a Spark JVM, ~40 s
}


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
LONGEST_FILES = ["test_spark.py", "test_causal_choice.py", "test_golden.py", "test_ingest_bulk.py",
                 "test_objstore.py", "test_shard.py", "test_differential.py", "test_relevance.py",
                 "test_resume.py", "test_bad_input.py"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        test = item.nodeid.split("[", 1)[0]
        if test in SLOW or test.split("::", 1)[0] in SLOW:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):        # a serial run keeps the files' order
        rank = {name: i for i, name in enumerate(LONGEST_FILES)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
