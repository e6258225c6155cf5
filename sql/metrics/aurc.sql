-- metric: aurc -- area under the risk-coverage curve, tie-aware (coverage definition 2)
-- spec: S3.14 (each level's risk weighted by the cases it spans, over N), S9.3 (the curve
--       reproduces it), S9.8 (exact sum of the level terms: a function of the multiset alone)
-- grain: one row per (dim, key) group with paired cases
-- input: levels
-- params: none
-- kind: paired
-- order_dependent: yes
-- coverage: yes
-- family: selective 1
-- output: dim, key, metric, value, n_paired, n_levels
SELECT dim, key, 'aurc' AS metric,
       lc_exact_sum(risk * CAST(rows AS DOUBLE)) / CAST(any_value(N) AS DOUBLE) AS value,
       any_value(N) AS n_paired,
       count(*) AS n_levels
FROM levels
GROUP BY dim, key
