-- query: calib_summary -- accuracy, confidence, ECE, Brier, NLL and selective accuracy of each phase
-- spec: S3.10 (ece, from calib_reliability, bin terms in bin order), S3.11 (brier), S3.12 (levels: NaN
--       last), S3.13 (selective accuracy: k = max(1, ceil(c N)), every case as confident as the k-th)
-- grain: one row per phase
-- input: calib_applied, calib_reliability
-- params: none
-- output: phase, n, hits, accuracy, mean_confidence, ece, brier, nll, selective_accuracy_50,
--         selective_accuracy_80
-- why: the numbers a report gives, over the cases both phases share, so before and after differ only by
--      the recalibration. nll = mean of -ln P(gold) (apply.sql, in log space).
WITH base AS (
    SELECT phase, count(*) AS n, count(*) FILTER (WHERE correct) AS hits,
           lc_exact_sum(conf) / CAST(count(*) AS DOUBLE) AS mean_confidence,
           lc_exact_sum((conf - CAST(correct AS INTEGER)) * (conf - CAST(correct AS INTEGER)))
               / CAST(count(*) AS DOUBLE) AS brier,
           lc_exact_sum(nll) / CAST(count(*) AS DOUBLE) AS nll
    FROM calib_applied GROUP BY phase
), ece AS (
    SELECT phase, list_sum(list(coalesce(contribution, 0.0) ORDER BY bin)) AS ece FROM calib_reliability GROUP BY phase
), ordered AS (
    SELECT phase, conf, correct,
           row_number() OVER (PARTITION BY phase ORDER BY isnan(conf), conf DESC) AS pos
    FROM calib_applied
), cuts AS (
    SELECT o.phase, c.cov,
           arg_min(o.conf, o.pos) FILTER (WHERE o.pos >= greatest(1, ceil(c.cov * b.n))) AS cut
    FROM ordered o JOIN base b USING (phase) CROSS JOIN (VALUES (CAST(0.5 AS DOUBLE)), (CAST(0.8 AS DOUBLE))) c(cov)
    GROUP BY o.phase, c.cov
), selective AS (
    SELECT c.phase, c.cov,
           CAST(count(*) FILTER (WHERE o.correct AND (isnan(c.cut) OR (o.conf >= c.cut AND NOT isnan(o.conf)))) AS DOUBLE)
               / CAST(count(*) FILTER (WHERE isnan(c.cut) OR (o.conf >= c.cut AND NOT isnan(o.conf))) AS DOUBLE) AS value
    FROM cuts c JOIN ordered o USING (phase) GROUP BY c.phase, c.cov
)
SELECT b.phase, b.n, b.hits, CAST(b.hits AS DOUBLE) / CAST(b.n AS DOUBLE) AS accuracy, b.mean_confidence,
       e.ece, b.brier, b.nll,
       max(s.value) FILTER (WHERE s.cov = 0.5) AS selective_accuracy_50,
       max(s.value) FILTER (WHERE s.cov = 0.8) AS selective_accuracy_80
FROM base b JOIN ece e USING (phase) JOIN selective s USING (phase)
GROUP BY ALL
ORDER BY b.phase DESC
