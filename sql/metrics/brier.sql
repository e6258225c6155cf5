-- metric: brier -- mean (confidence - correct)^2 over paired cases, no clamping
-- spec: S3.11, S3.9 (paired set), S3.3 (NaN drops the key), S9.2 (n_paired)
-- grain: one row per (dim, key) group with paired cases
-- input: slice_sums (sq_*: partial exact sums of the squared errors)
-- params: none
-- kind: paired
-- order_dependent: yes
-- family: calibration 3
-- output: dim, key, metric, value, n_paired
SELECT dim, key, 'brier' AS metric,
       lc_limbs_mean(sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf, n_conf) AS value,
       sum(n_conf) AS n_paired
FROM slice_sums
WHERE n_conf > 0 AND correct IS NOT NULL
GROUP BY dim, key
