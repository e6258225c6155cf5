-- table: cells -- one run's cases aggregated to distinct (slice set, answer type, confidence, correctness)
-- spec: S3.2 (who counts where), S3.12 (-0.0 and 0.0 are one level; NaNs are one level)
-- grain: one row per distinct combination; n = number of cases in it
-- input: cases (view over the warehouse)
-- params: run_id
-- output: slice_set, answer_type, conf, correct, n
-- why: every metric reads these rows instead of the cases; ties collapse here, and grouping by
--      the integer slice_set is several times cheaper than by four columns and a list.
SELECT slice_set, answer_type, confidence + 0.0 AS conf, correct, count(*) AS n
FROM cases
WHERE run_id = $run_id
GROUP BY ALL
