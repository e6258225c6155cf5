-- query: ece_equal_mass -- expected calibration error over 15 equal-mass bins, per phase
-- spec: S3.10 (the same sum over bins of n_b / N * |mean confidence - accuracy|; N counts every case,
--       a confidence outside [0, 1] or NaN is in no bin), S3.12 (equal values are one level)
-- grain: one row per phase
-- input: calib_applied
-- params: none
-- output: phase, ece_equal_mass, n, n_binned
-- why: equal-width bins put most cases of a confident model in the top bin; equal-mass bins split the
--      binned cases into 15 bins of (nearly) equal count. A case's bin is floor(15 * below / n_binned),
--      below = binned cases with a strictly smaller confidence, so tied confidences share one bin and the
--      value does not depend on row order. Bin terms are added in bin order.
WITH totals AS (
    SELECT phase, count(*) AS n,
           count(*) FILTER (WHERE conf >= 0.0 AND conf <= 1.0 AND NOT isnan(conf)) AS n_binned
    FROM calib_applied GROUP BY phase
), binned AS (
    SELECT a.phase, a.conf, a.correct, t.n, t.n_binned,
           (rank() OVER (PARTITION BY a.phase ORDER BY a.conf) - 1) AS below
    FROM calib_applied a JOIN totals t USING (phase)
    WHERE a.conf >= 0.0 AND a.conf <= 1.0 AND NOT isnan(a.conf)
), per_bin AS (
    SELECT phase, CAST(15 * below // n_binned AS BIGINT) AS bin, any_value(n) AS n, count(*) AS n_b,
           lc_exact_sum(conf) / CAST(count(*) AS DOUBLE) AS mean_confidence,
           CAST(count(*) FILTER (WHERE correct) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS accuracy
    FROM binned GROUP BY ALL
)
SELECT t.phase,
       coalesce(list_sum(list(CAST(b.n_b AS DOUBLE) / CAST(b.n AS DOUBLE) * abs(b.mean_confidence - b.accuracy)
                              ORDER BY b.bin)), 0.0) AS ece_equal_mass,
       t.n, t.n_binned
FROM totals t LEFT JOIN per_bin b USING (phase)
GROUP BY t.phase, t.n, t.n_binned
