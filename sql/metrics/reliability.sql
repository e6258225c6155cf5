-- table: reliability -- the 15-bin reliability table behind ece, empty bins included
-- spec: S3.10 (edges i/15 in binary64; bin 0 closed both ends, bin b >= 1 is (e_b, e_b+1];
--       values outside [0, 1] and NaN are in no bin but stay in N), S9.4
-- grain: one row per (dim, key, bin) for every group with paired cases; 15 rows per group
-- input: slice_sums
-- params: none
-- output: dim, key, bin, lower, upper, closed_lower, n_b, mean_confidence, accuracy, gap, weight,
--         contribution, too_small (fewer than 10 cases: lc_too_small_bin), n_paired,
--         n_unbinned_out_of_range, n_unbinned_nan
WITH paired AS (
    SELECT * FROM slice_sums WHERE n_conf > 0 AND correct IS NOT NULL
), totals AS (
    SELECT dim, key, sum(n_conf) AS n_paired, sum(n_out) AS n_unbinned_out_of_range, sum(n_nan) AS n_unbinned_nan
    FROM paired GROUP BY dim, key
), edges AS (
    SELECT b AS bin, CAST(b AS DOUBLE) / 15.0 AS lower, CAST(b + 1 AS DOUBLE) / 15.0 AS upper
    FROM range(15) t(b)
), per_bin AS (
    -- slice_sums' bin is lc_reliability_bin(conf): the count of interior edges e_1..e_14 strictly below it
    SELECT dim, key, bin, sum(n_conf) AS n_b,
           lc_limbs_total(conf_0, conf_1, conf_2, conf_3, conf_rest, conf_nan, conf_pinf, conf_ninf) / CAST(sum(n_conf) AS DOUBLE) AS mean_confidence,
           CAST(sum(CASE WHEN correct THEN n_conf ELSE 0 END) AS DOUBLE) / CAST(sum(n_conf) AS DOUBLE) AS accuracy
    FROM paired WHERE bin IS NOT NULL GROUP BY dim, key, bin
)
SELECT t.dim, t.key, e.bin, e.lower, e.upper, e.bin = 0 AS closed_lower,
       coalesce(b.n_b, 0) AS n_b, b.mean_confidence, b.accuracy,
       b.mean_confidence - b.accuracy AS gap,
       CAST(b.n_b AS DOUBLE) / CAST(t.n_paired AS DOUBLE) AS weight,
       CAST(b.n_b AS DOUBLE) / CAST(t.n_paired AS DOUBLE) * abs(b.mean_confidence - b.accuracy) AS contribution,
       lc_too_small_bin(coalesce(b.n_b, 0)) AS too_small,
       t.n_paired, t.n_unbinned_out_of_range, t.n_unbinned_nan
FROM totals t CROSS JOIN edges e
LEFT JOIN per_bin b ON b.dim = t.dim AND b.key = t.key AND b.bin = e.bin
