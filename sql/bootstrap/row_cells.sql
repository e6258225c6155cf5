-- table: row_cells -- one run's cases aggregated per dataset row, slice set and confidence
-- spec: S9.5 (the resampling unit is the dataset row: all cases of a row move together)
-- grain: one row per distinct (row_index, slice_set, conf)
-- input: cases
-- params: run_id
-- output: row_index, slice_set, conf, n
SELECT row_index, slice_set, confidence + 0.0 AS conf, count(*) AS n
FROM cases
WHERE run_id = $run_id
GROUP BY ALL
