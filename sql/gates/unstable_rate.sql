-- gate: unstable_rate -- K reruns of one dataset whose share of unstable cases is above --max-unstable-rate
-- spec: S9 (case-level comparison across runs); unstable rate = unstable / compared cases; runs with no
--       compared case have no rate and fail (a missing measurement never passes, S6.6)
-- grain: at most one row (the overall group)
-- input: stability_summary (the rows of sql/stability/summary.sql, registered by the caller)
-- params: max_unstable_rate
-- output: dim, key, metric, value, bound, compared, unstable, failure ('missing'|'above'), severity
SELECT 'overall' AS dim, '' AS key, 'unstable_rate' AS metric, s.unstable_rate AS value,
       $max_unstable_rate AS bound, coalesce(s.compared, 0) AS compared, coalesce(s.unstable, 0) AS unstable,
       CASE WHEN s.unstable_rate IS NULL THEN 'missing' ELSE 'above' END AS failure,
       'error' AS severity
FROM (SELECT 1) AS one(x)
LEFT JOIN stability_summary s ON s.dim = 'overall'
WHERE s.unstable_rate IS NULL OR s.unstable_rate > $max_unstable_rate
