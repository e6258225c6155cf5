-- metric: aurc -- area under the risk-coverage curve, tie-aware (coverage definition 2)
-- spec: S3.14 (each level's risk weighted by the cases it spans, over N), S9.3 (the curve
--       reproduces it), S9.8 (exact sum of the level terms: a function of the multiset alone)
-- grain: one row per (dim, key) group with paired cases
-- input: levels, level_groups
-- params: none
-- kind: paired
-- order_dependent: yes
-- coverage: yes
-- family: selective 1
-- output: dim, key, metric, value, n_paired, n_levels
-- why: aggregated per group number first, then named: `levels` has about one row per case per group
--      with full-precision confidences.
SELECT g.dim, g.key, 'aurc' AS metric, a.value, a.n_paired, a.n_levels
FROM (SELECT gid,
             lc_exact_sum(lc_risk(cum_hits, accepted) * CAST(rows AS DOUBLE))
                 / CAST(any_value(N) AS DOUBLE) AS value,
             any_value(N) AS n_paired,
             count(*) AS n_levels
      FROM levels
      GROUP BY gid) a
JOIN level_groups g USING (gid)
