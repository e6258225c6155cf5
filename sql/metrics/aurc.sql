-- metric: aurc -- area under the risk-coverage curve, tie-aware (coverage definition 2)
-- spec: S3.14 (each level's risk weighted by the cases it spans, over N), S9.3 (the curve
--       reproduces it), S9.8 (exact sum of the level terms: a function of the multiset alone)
-- grain: one row per (dim, key) group with paired cases
-- input: level_points, level_groups
-- params: none
-- kind: paired
-- order_dependent: yes
-- coverage: yes
-- family: selective 1
-- output: dim, key, metric, value, n_paired, n_levels
-- why: the exact sum over every level of the group, lc_exact_sum(lc_risk(cum_hits, accepted) * rows) / N,
--      is taken where `levels` streams out of its sort (pipeline/level_points.sql, one read of every level
--      for all the curve's readers); this file names it per group.
SELECT g.dim, g.key, 'aurc' AS metric, a.value, a.n_paired, a.n_levels
FROM (SELECT gid, any_value(aurc) AS value, any_value(N) AS n_paired, any_value(n_levels) AS n_levels
      FROM level_points
      GROUP BY gid) a
JOIN level_groups g USING (gid)
