-- query: stability_run_accuracy_rows -- each run's accuracy over the compared cases, per group, in run order
-- spec: S3.4-S3.5 (accuracy), S9 (case-level comparison across runs)
-- grain: one row per (dim, key, run) of stability_run_accuracy
-- input: stability_run_accuracy
-- params: none
-- output: dim, key, run_index, run_id, scored, hits, accuracy
SELECT dim, key, run_index, run_id, scored, hits, accuracy
FROM stability_run_accuracy
ORDER BY dim <> 'overall', dim, key, run_index
