-- metric: coverage:confidence>=<threshold> -- a confidence-threshold cut: coverage and selective accuracy when accepting gate confidence >= t
-- spec: S9.3 (over the paired cases; accept those whose gate confidence, S2.8, is >= t; paired cases
--       without one are unevaluated; coverage = accepted / N), S6.11 (what --min-confidence flags)
-- grain: one row per (dim, key) group with paired cases
-- input: cases, slice_map
-- params: run_id, threshold
-- kind: cut
-- output: dim, key, value, N, accepted, hits, unevaluated, coverage_actual, threshold
SELECT m.dim, m.key,
       CAST(sum(CASE WHEN c.gate_confidence >= $threshold AND c.correct THEN 1 ELSE 0 END) AS DOUBLE)
         / nullif(CAST(sum(CASE WHEN c.gate_confidence >= $threshold THEN 1 ELSE 0 END) AS DOUBLE), 0.0) AS value,
       count(*) AS N,
       sum(CASE WHEN c.gate_confidence >= $threshold THEN 1 ELSE 0 END) AS accepted,
       sum(CASE WHEN c.gate_confidence >= $threshold AND c.correct THEN 1 ELSE 0 END) AS hits,
       sum(CASE WHEN c.gate_confidence IS NULL THEN 1 ELSE 0 END) AS unevaluated,
       CAST(sum(CASE WHEN c.gate_confidence >= $threshold THEN 1 ELSE 0 END) AS DOUBLE) / CAST(count(*) AS DOUBLE)
         AS coverage_actual,
       $threshold AS threshold
FROM cases c JOIN slice_map m USING (slice_set)
WHERE c.run_id = $run_id AND c.confidence IS NOT NULL AND c.correct IS NOT NULL
GROUP BY m.dim, m.key
