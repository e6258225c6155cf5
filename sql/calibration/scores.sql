-- table: calib_scores -- one run's paired choice and noul cases with the log-scores a temperature rescales
-- spec: S2.6 (the temperature bucket), S7.4 (p = softmax(z / max(0.001, T)) from the stored raw logits),
--       S2.4 (model answers round probabilities to 4 decimals), S3.9 (paired cases), S2.9 (correct)
-- grain: one row per paired case (confidence and correct both set) of the run whose answer is a choice or noul
-- input: cases (view over the warehouse)
-- params: run_id
-- output: case_id, bucket, answer_type, options, source, logp, gold, correct, usable
-- why: the run's own probabilities are softmax(logp), so temperature T gives softmax(logp / T) and T = 1 is
--      the run as stored. logp is, first hit wins: the raw logits over the temperature the run applied
--      (`logits`; exact), the log of the stored probabilities (`probabilities`), or [ln(1-p), ln p] of a
--      noul answer's P(true) (`noul`). A stored probability of 0 was rounded away (S2.4) and reads as
--      5e-5, the largest value that rounds to it, so a confidently wrong case keeps a finite loss.
--      bucket is the case's temperature bucket (S2.6, as the run recorded it), else 'all'. gold is the 0-based
--      index of the label among the options (noul: false 0, true 1). usable: logp and gold are known.
WITH c AS (
    SELECT case_id, coalesce(temperature_bucket, 'all') AS bucket, answer_type, options, correct,
           logits, temperature, probabilities, noul_p,
           CASE WHEN answer_type = 'choice'
                THEN CAST(list_position(options, json_extract_string(expected_json, '$')) - 1 AS BIGINT)
                WHEN expected_json = 'true' THEN CAST(1 AS BIGINT)
                WHEN expected_json = 'false' THEN CAST(0 AS BIGINT) END AS gold
    FROM cases
    WHERE run_id = $run_id AND answer_type IN ('choice', 'noul')
      AND confidence IS NOT NULL AND correct IS NOT NULL
), s AS (
    SELECT *,
           CASE WHEN logits IS NOT NULL AND len(logits) = len(options) AND len(logits) > 0
                     AND list_bool_and(list_transform(logits, lambda x: x IS NOT NULL AND isfinite(x)))
                THEN 'logits'
                WHEN probabilities IS NOT NULL AND len(probabilities) = len(options) AND len(probabilities) > 0
                     AND list_bool_and(list_transform(probabilities, lambda p: p IS NOT NULL AND p >= 0.0 AND p <= 1.0))
                     AND list_max(probabilities) > 0.0
                THEN 'probabilities'
                WHEN answer_type = 'noul' AND noul_p >= 0.0 AND noul_p <= 1.0
                THEN 'noul' END AS source
    FROM c
)
SELECT case_id, bucket, answer_type, options, source,
       CASE source
           WHEN 'logits' THEN list_transform(logits, lambda x: x / greatest(0.001, coalesce(temperature, 1.0)))
           WHEN 'probabilities' THEN list_transform(probabilities, lambda p: ln(CASE WHEN p = 0.0 THEN 5e-5 ELSE p END))
           WHEN 'noul' THEN [ln(CASE WHEN noul_p = 1.0 THEN 5e-5 ELSE 1.0 - noul_p END),
                             ln(CASE WHEN noul_p = 0.0 THEN 5e-5 ELSE noul_p END)]
       END AS logp,
       gold, correct,
       source IS NOT NULL AND gold IS NOT NULL AND gold >= 0 AND gold < len(options) AS usable
FROM s
