-- table: cells -- one run's cases aggregated to distinct (slice set, confidence)
-- spec: S3.2 (who counts where), S3.12 (-0.0 and 0.0 are one level; NaNs are one level)
-- grain: one row per distinct (slice_set, conf); n = number of cases in it
-- input: cases (view over the warehouse)
-- params: run_id
-- output: slice_set, conf, n
-- why: every metric reads these rows instead of the cases; ties collapse here. slice_set is a
--      dense integer for (language, model, qid, tags, answer type, correctness), written with the
--      decision, so this is a two-key aggregation: the one pass over the run's rows.
SELECT slice_set, confidence + 0.0 AS conf, count(*) AS n
FROM cases
WHERE run_id = $run_id
GROUP BY ALL
