-- table: error_cells -- score cases aggregated to distinct (slice set, |score - label|)
-- spec: S3.6, S3.7 (score answers with a numeric, non-boolean label; the stored evaluator value)
-- grain: one row per distinct (slice_set, err)
-- input: cases
-- params: run_id
-- output: slice_set, err, n
SELECT slice_set, score_mae AS err, count(*) AS n
FROM cases
WHERE run_id = $run_id AND score_mae IS NOT NULL
GROUP BY ALL
