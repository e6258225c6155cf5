-- query: runs -- the committed runs, oldest first (`laya-cases runs`)
-- spec: S5.1, S5.2 (each run's identity hashes, listed in full for csv/json)
-- grain: one row per committed run
-- input: runs
-- params: none
-- output: run_id, kind, runner, model_id, model_revision, n_rows, n_cases, n_errors, dataset,
--         dataset_sha256, labelled_rows_sha256, questions_sha256, schema_version, created_at
SELECT run_id, kind, runner, model_id, model_revision, n_rows, n_cases, n_errors, dataset,
       dataset_sha256, labelled_rows_sha256, questions_sha256, schema_version, created_at
FROM runs
ORDER BY created_at, run_id
