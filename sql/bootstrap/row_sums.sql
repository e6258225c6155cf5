-- table: row_sums -- one run's counts and partial exact sums per dataset row, slice set and reliability bin
-- spec: S9.5 (the resampling unit is the dataset row), S3.3, S9.8 (partial sums add up exactly)
-- grain: one row per distinct (row_index, slice_set, bin); bin as in pipeline/slice_sums.sql
-- input: row_cells, slice_map
-- params: none
-- output: row_index, slice_set, bin, n, n_conf, n_nan, n_out, conf_0, conf_1, conf_2, conf_3, conf_rest,
--         conf_nan, conf_pinf, conf_ninf, sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf
-- why: built once per bootstrap; a replicate then multiplies each row's partial sums by the row's weight
--      (bootstrap/slice_sums.sql) instead of splitting every case's confidence into limbs again.
WITH sets AS (
    SELECT DISTINCT slice_set, correct FROM slice_map
), x AS (
    SELECT c.row_index, c.slice_set, c.conf, c.n, lc_reliability_bin(c.conf) AS bin,
           CASE WHEN s.correct IS NOT NULL THEN (c.conf - CASE WHEN s.correct THEN 1.0 ELSE 0.0 END)
                                                * (c.conf - CASE WHEN s.correct THEN 1.0 ELSE 0.0 END) END AS sq
    FROM row_cells c JOIN sets s USING (slice_set)
)
SELECT row_index, slice_set, bin, CAST(sum(n) AS BIGINT) AS n,
       CAST(sum(CASE WHEN conf IS NOT NULL THEN n ELSE 0 END) AS BIGINT) AS n_conf,
       CAST(sum(CASE WHEN isnan(conf) THEN n ELSE 0 END) AS BIGINT) AS n_nan,
       CAST(sum(CASE WHEN NOT isnan(conf) AND (conf < 0.0 OR conf > 1.0) THEN n ELSE 0 END) AS BIGINT) AS n_out,
       lc_limb0_w(conf, n) AS conf_0, lc_limb1_w(conf, n) AS conf_1, lc_limb2_w(conf, n) AS conf_2,
       lc_limb3_w(conf, n) AS conf_3, lc_rest_w(conf, n) AS conf_rest, lc_nan_w(conf, n) AS conf_nan,
       lc_pinf_w(conf, n) AS conf_pinf, lc_ninf_w(conf, n) AS conf_ninf,
       lc_limb0_w(sq, n) AS sq_0, lc_limb1_w(sq, n) AS sq_1, lc_limb2_w(sq, n) AS sq_2,
       lc_limb3_w(sq, n) AS sq_3, lc_rest_w(sq, n) AS sq_rest, lc_nan_w(sq, n) AS sq_nan,
       lc_pinf_w(sq, n) AS sq_pinf, lc_ninf_w(sq, n) AS sq_ninf
FROM x GROUP BY row_index, slice_set, bin
