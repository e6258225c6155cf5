-- metric: mean_confidence -- mean of the S2.7 confidence over every case that has one
-- spec: S3.8 (score answers included), S3.3 (exact sum, one division; NaN is published), S9.2
-- grain: one row per (dim, key) group with at least one confident case
-- input: slice_sums
-- params: none
-- kind: evaluator
-- family: calibration 1
-- output: dim, key, metric, value, n
SELECT dim, key, 'mean_confidence' AS metric,
       lc_limbs_mean(conf_0, conf_1, conf_2, conf_3, conf_rest, conf_nan, conf_pinf, conf_ninf, n_conf) AS value,
       sum(n_conf) AS n
FROM slice_sums
WHERE n_conf > 0
GROUP BY dim, key
