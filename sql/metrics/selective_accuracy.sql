-- metric: selective_accuracy@<coverage%> -- accuracy over the most confident share c of paired cases
-- spec: S3.13 (k = max(1, ceil(c*N)) in binary64; the cut takes the whole level holding the k-th
--       case, so accepted >= k; a NaN cut accepts all N), S9.2 (N, k, accepted, hits, coverage)
-- grain: one row per (dim, key) group with paired cases; no rows unless 0 < coverage <= 1
-- input: levels
-- params: coverage
-- kind: paired
-- coverage: yes
-- interval: yes
-- family: selective 2
-- published_at: 0.5, 0.8
-- output: dim, key, value, N, k_requested, accepted, hits, coverage_actual, cut_confidence
WITH k AS (
    SELECT dim, key, any_value(N) AS N,
           greatest(1, CAST(ceil($coverage * CAST(any_value(N) AS DOUBLE)) AS BIGINT)) AS k_requested
    FROM levels GROUP BY dim, key
)
SELECT l.dim, l.key,
       arg_min(l.selective_accuracy, l.level) AS value,
       any_value(k.N) AS N, any_value(k.k_requested) AS k_requested,
       arg_min(l.accepted, l.level) AS accepted,
       arg_min(l.cum_hits, l.level) AS hits,
       arg_min(l.coverage, l.level) AS coverage_actual,
       arg_min(l.conf, l.level) AS cut_confidence
FROM levels l JOIN k ON k.dim = l.dim AND k.key = l.key
WHERE l.accepted >= k.k_requested AND $coverage > 0.0 AND $coverage <= 1.0
GROUP BY l.dim, l.key
