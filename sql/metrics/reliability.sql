-- table: reliability -- the 15-bin reliability table behind ece, empty bins included
-- spec: S3.10 (edges i/15 in binary64; bin 0 closed both ends, bin b >= 1 is (e_b, e_b+1];
--       values outside [0, 1] and NaN are in no bin but stay in N), S9.4
-- grain: one row per (dim, key, bin) for every group with paired cases; 15 rows per group
-- input: slice_cells
-- params: none
-- output: dim, key, bin, lower, upper, closed_lower, n_b, mean_confidence, accuracy, gap, weight,
--         contribution, n_paired, n_unbinned_out_of_range, n_unbinned_nan
WITH paired AS (
    SELECT dim, key, conf, correct, n FROM slice_cells
    WHERE conf IS NOT NULL AND correct IS NOT NULL
), totals AS (
    SELECT dim, key, sum(n) AS n_paired,
           sum(CASE WHEN isnan(conf) THEN 0 WHEN conf < 0.0 OR conf > 1.0 THEN n ELSE 0 END) AS n_unbinned_out_of_range,
           sum(CASE WHEN isnan(conf) THEN n ELSE 0 END) AS n_unbinned_nan
    FROM paired GROUP BY dim, key
), edges AS (
    SELECT b AS bin, CAST(b AS DOUBLE) / 15.0 AS lower, CAST(b + 1 AS DOUBLE) / 15.0 AS upper
    FROM range(15) t(b)
), binned AS (
    -- the bin is the count of interior edges e_1..e_14 strictly below c (never ceil(15c) - 1)
    SELECT p.dim, p.key, p.conf, p.correct, p.n,
           (
                CAST(p.conf > CAST(1 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(2 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(3 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(4 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(5 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(6 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(7 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(8 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(9 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(10 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(11 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(12 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(13 AS DOUBLE) / 15.0 AS INTEGER)
             +  CAST(p.conf > CAST(14 AS DOUBLE) / 15.0 AS INTEGER)
           ) AS bin
    FROM paired p
    WHERE p.conf >= 0.0 AND p.conf <= 1.0
), per_bin AS (
    SELECT dim, key, bin, sum(n) AS n_b,
           lc_exact_sum_w(conf, n) / CAST(sum(n) AS DOUBLE) AS mean_confidence,
           CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS accuracy
    FROM binned GROUP BY dim, key, bin
)
SELECT t.dim, t.key, e.bin, e.lower, e.upper, e.bin = 0 AS closed_lower,
       coalesce(b.n_b, 0) AS n_b, b.mean_confidence, b.accuracy,
       b.mean_confidence - b.accuracy AS gap,
       CAST(b.n_b AS DOUBLE) / CAST(t.n_paired AS DOUBLE) AS weight,
       CAST(b.n_b AS DOUBLE) / CAST(t.n_paired AS DOUBLE) * abs(b.mean_confidence - b.accuracy) AS contribution,
       t.n_paired, t.n_unbinned_out_of_range, t.n_unbinned_nan
FROM totals t CROSS JOIN edges e
LEFT JOIN per_bin b ON b.dim = t.dim AND b.key = t.key AND b.bin = e.bin
