-- query: lmeval_brier -- lm-evaluation-harness's multi-class brier_score of an imported run, per question
-- spec: S9 (an extension: lm-eval's own metric, so an import is checked against the number it logged),
--       S2.4 (the stored probabilities, in option order)
-- grain: one row per qid with choice cases whose label is one of the options and whose probabilities are all present
-- input: cases (view over the warehouse)
-- params: run_id
-- output: qid, brier_score, n
-- why: lm-eval's brier_score (lm_eval/api/metrics.py) is mean over docs of sum_i (p_i - [i = gold])^2 over
--      every option, not the report's top-label brier (S3.11); expanded: sum_i p_i^2 - 2 p_gold + 1.
--      It equals lm-eval's only for an import with --norm raw (the probabilities are softmax of the raw
--      log-likelihoods there, as in lm-eval's task.py).
WITH c AS (
    SELECT qid, probabilities AS p,
           list_position(options, json_extract_string(expected_json, '$')) AS g
    FROM cases
    WHERE run_id = $run_id AND question_type = 'choice' AND expected_kind = 'string'
      AND probabilities IS NOT NULL AND list_count(probabilities) = len(options)
)
SELECT qid, avg(list_sum(list_transform(p, lambda x: x * x)) - 2 * p[g] + 1) AS brier_score, count(*) AS n
FROM c
WHERE g IS NOT NULL
GROUP BY qid
ORDER BY qid
