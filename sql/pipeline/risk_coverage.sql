-- query: risk_coverage -- the overall risk-coverage curve as the report publishes it, bounded in size
-- spec: S9.3 (the curve), S3.13 (the cut at coverage c is the first level with accepted >= k,
--       k = max(1, ceil(c * N)) in binary64), S3.12 (level order)
-- grain: one row per published level of the overall group, in level order: every level when there
--        are at most 1,000; otherwise the first level, and the level of the cut at each coverage in
--        $coverages and at each coverage j/1000 (j = 1..1000, the last level at j = 1000), once each
-- input: level_points, level_groups
-- params: coverages (the report's published and asked-for coverages, e.g. [0.5, 0.8])
-- output: level, confidence, rows, hits, accepted, cum_hits, coverage, risk, selective_accuracy
-- why: nothing in the report may grow with the number of distinct confidences, yet every tie-aware
--      cut the report publishes must be a point of its curve. The full curve is `levels` (docs/report.md
--      shows the one query that lists it); this file reads `level_points`, which keeps level 1, every
--      level of a group with at most 1,000, and every level that can hold the cut of a coverage j/1000 or
--      of one in `coverages` (a superset: the ASOF join below picks the cuts exactly, as over `levels`).
--      The ratios are computed for the published rows alone.
WITH overall AS (
    SELECT gid FROM level_groups WHERE dim = 'overall'
), lv AS (
    SELECT level, conf, rows, hits, accepted, cum_hits, N, n_levels
    FROM level_points WHERE gid = (SELECT gid FROM overall)
), total AS (
    SELECT any_value(n_levels) AS n_levels, any_value(N) AS N FROM lv
), ks AS (
    SELECT DISTINCT greatest(1, CAST(ceil(c * CAST(t.N AS DOUBLE)) AS BIGINT)) AS k
    FROM total t,
         (SELECT unnest(CAST($coverages AS DOUBLE[])) AS c
          UNION ALL SELECT CAST(j AS DOUBLE) / 1000.0 FROM range(1, 1001) r(j)) cs
    WHERE cs.c > 0.0 AND cs.c <= 1.0
), picked AS (
    SELECT p.level FROM ks ASOF JOIN (SELECT level, accepted FROM lv) p ON ks.k <= p.accepted
    UNION SELECT 1
)
SELECT lv.level, lv.conf AS confidence, lv.rows, lv.hits, lv.accepted, lv.cum_hits,
       lc_coverage(lv.accepted, lv.N) AS coverage, lc_risk(lv.cum_hits, lv.accepted) AS risk,
       lc_selective_accuracy(lv.cum_hits, lv.accepted) AS selective_accuracy
FROM lv, total
WHERE total.n_levels <= 1000 OR lv.level IN (SELECT level FROM picked)
ORDER BY lv.level
