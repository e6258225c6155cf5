-- metric: score_mae -- mean |score - label| over score answers with a numeric label
-- spec: S3.6, S3.3 (exactly rounded sum, one division; NaN published), S9.2
-- grain: one row per (dim, key) group with at least one score case
-- input: slice_errors (err is the stored per-case evaluator value)
-- params: none
-- kind: evaluator
-- family: accuracy 3
-- output: dim, key, metric, value, n
SELECT dim, key, 'score_mae' AS metric,
       lc_exact_mean_w(err, n) AS value,
       sum(n) AS n
FROM slice_errors
GROUP BY dim, key
