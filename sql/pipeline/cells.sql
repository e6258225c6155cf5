-- table: cells -- one run's cases aggregated to distinct (slice attributes, confidence, correctness, score error)
-- spec: S3.2 (who counts where), S3.12 (-0.0 and 0.0 are one level; NaNs are one level)
-- grain: one row per distinct combination; n = number of cases in it
-- input: cases (view over the warehouse)
-- params: run_id
-- output: language_key, model_key, qid, tags, answer_type, conf, correct, err, n
-- why: every metric below reads these few rows instead of the cases; ties collapse here.
SELECT language_key, model_key, qid, tags, answer_type,
       confidence + 0.0 AS conf,
       correct,
       score_mae AS err,
       count(*) AS n
FROM cases
WHERE run_id = $run_id
GROUP BY ALL
