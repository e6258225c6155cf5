-- metric: brier -- mean (confidence - correct)^2 over paired cases, no clamping
-- spec: S3.11, S3.9 (paired set), S3.3 (NaN drops the key), S9.2 (n_paired)
-- grain: one row per (dim, key) group with paired cases
-- input: slice_cells
-- params: none
-- kind: paired
-- order_dependent: yes
-- family: calibration 3
-- output: dim, key, metric, value, n_paired
SELECT dim, key, 'brier' AS metric,
       lc_exact_mean_w((conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END)
                       * (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END), n) AS value,
       sum(n) AS n_paired
FROM slice_cells
WHERE conf IS NOT NULL AND correct IS NOT NULL
GROUP BY dim, key
