-- table: stability_run_accuracy -- each run's accuracy over the compared cases of each group
-- spec: S3.4-S3.5 (accuracy: the share of scored cases that are correct; choice and noul cases pooled)
-- grain: one row per (dim, key, run) with at least one scored compared case in the group
-- input: stability_slice_cases, stability_case_runs
-- params: none
-- output: dim, key, run_index, run_id, scored, hits, accuracy
SELECT s.dim, s.key, r.run_index, r.run_id, count(*) AS scored, count(*) FILTER (WHERE r.correct) AS hits,
       count(*) FILTER (WHERE r.correct) / count(*) AS accuracy
FROM stability_slice_cases s JOIN stability_case_runs r ON r.case_id = s.case_id
WHERE s.compared AND r.status = 'scored'
GROUP BY s.dim, s.key, r.run_index, r.run_id
