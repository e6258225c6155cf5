-- metric: mean_confidence -- mean of the S2.7 confidence over every case that has one
-- spec: S3.8 (score answers included), S3.3 (exact sum, one division; NaN is published), S9.2
-- grain: one row per (dim, key) group with at least one confident case
-- input: slice_cells
-- params: none
-- kind: evaluator
-- family: calibration 1
-- output: dim, key, metric, value, n
SELECT dim, key, 'mean_confidence' AS metric,
       lc_exact_mean_w(conf, n) AS value,
       sum(n) AS n
FROM slice_cells
WHERE conf IS NOT NULL
GROUP BY dim, key
