-- metric: selective_accuracy@<coverage%> -- accuracy over the most confident share c of paired cases
-- spec: S3.13 (k = max(1, ceil(c*N)) in binary64; the cut takes the whole level holding the k-th
--       case, so accepted >= k; a NaN cut accepts all N), S9.2 (N, k, accepted, hits, coverage)
-- grain: one row per (dim, key) group with paired cases; no rows unless 0 < coverage <= 1
-- input: level_points, level_groups
-- params: coverage
-- kind: paired
-- coverage: yes
-- interval: yes
-- family: selective 2
-- published_at: 0.5, 0.8
-- output: dim, key, value, N, k_requested, accepted, hits, coverage_actual, cut_confidence
-- why: every level row carries its group's N, so the cut is a filter and one aggregation. The
--      level holding the k-th case is the one row of its group with accepted >= k > accepted - rows
--      (accepted - rows is the level before's accepted): the filter keeps that row alone, not every
--      level past the cut, so the aggregation is over one row per group (arg_min keeps the first
--      level's meaning either way). The ratios (S9.2) are computed for that row alone, and the group
--      named through level_groups after the cut. It reads `level_points`, which holds the cut's level
--      for every coverage the report asks (the `coverages` it is built with), as `levels` would.
WITH cut AS (
    SELECT gid,
           any_value(N) AS N,
           arg_min(accepted, level) AS accepted,
           arg_min(cum_hits, level) AS hits,
           arg_min(conf, level) AS cut_confidence
    FROM level_points
    WHERE accepted >= greatest(1, CAST(ceil($coverage * CAST(N AS DOUBLE)) AS BIGINT))
      AND accepted - rows < greatest(1, CAST(ceil($coverage * CAST(N AS DOUBLE)) AS BIGINT))
      AND $coverage > 0.0 AND $coverage <= 1.0
    GROUP BY gid
)
SELECT g.dim, g.key,
       lc_selective_accuracy(c.hits, c.accepted) AS value,
       c.N,
       greatest(1, CAST(ceil($coverage * CAST(c.N AS DOUBLE)) AS BIGINT)) AS k_requested,
       c.accepted,
       c.hits,
       lc_coverage(c.accepted, c.N) AS coverage_actual,
       c.cut_confidence
FROM cut c JOIN level_groups g USING (gid)
