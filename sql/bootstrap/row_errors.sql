-- table: row_errors -- score cases aggregated per dataset row, slice set and |score - label|
-- spec: S9.5, S3.7
-- grain: one row per distinct (row_index, slice_set, err)
-- input: cases
-- params: run_id
-- output: row_index, slice_set, err, n
SELECT row_index, slice_set, score_mae AS err, count(*) AS n
FROM cases
WHERE run_id = $run_id AND score_mae IS NOT NULL
GROUP BY ALL
