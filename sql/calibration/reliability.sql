-- table: calib_reliability -- the 15-bin reliability table of each phase, with bins too small to read marked
-- spec: S3.10 (edges i/15, bin 0 closed both ends, N counts every case), S9.4 (empty bins listed with nulls)
-- grain: one row per (phase, bin), 15 per phase
-- input: calib_applied
-- params: none
-- output: phase, bin, lower, upper, n_b, mean_confidence, accuracy, gap, weight, contribution, too_small, n
-- why: the report's reliability table (metrics/reliability.sql) for the two phases; too_small is
--      lc_too_small_bin (fewer than 10 cases, empty bins included).
WITH totals AS (
    SELECT phase, count(*) AS n FROM calib_applied GROUP BY phase
), edges AS (
    SELECT b AS bin, CAST(b AS DOUBLE) / 15.0 AS lower, CAST(b + 1 AS DOUBLE) / 15.0 AS upper FROM range(15) t(b)
), per_bin AS (
    SELECT phase, lc_reliability_bin(conf) AS bin, count(*) AS n_b,
           lc_exact_sum(conf) / CAST(count(*) AS DOUBLE) AS mean_confidence,
           CAST(count(*) FILTER (WHERE correct) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS accuracy
    FROM calib_applied WHERE lc_reliability_bin(conf) IS NOT NULL GROUP BY ALL
)
SELECT t.phase, e.bin, e.lower, e.upper, coalesce(b.n_b, 0) AS n_b, b.mean_confidence, b.accuracy,
       b.mean_confidence - b.accuracy AS gap,
       CAST(b.n_b AS DOUBLE) / CAST(t.n AS DOUBLE) AS weight,
       CAST(b.n_b AS DOUBLE) / CAST(t.n AS DOUBLE) * abs(b.mean_confidence - b.accuracy) AS contribution,
       lc_too_small_bin(coalesce(b.n_b, 0)) AS too_small, t.n
FROM totals t CROSS JOIN edges e
LEFT JOIN per_bin b ON b.phase = t.phase AND b.bin = e.bin
