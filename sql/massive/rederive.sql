-- table: massive_cases -- cases.sql with prediction and confidence re-derived from the stored raw logits
-- spec: S7.4 (probs = softmax(z / max(0.001, T)) with max-subtraction; pred = first index of the
--       maximum; confidence = max(probs); T the bucket temperature of the chosen regime), S7.7
-- grain: one row per case of the run that has a language and stored logits
-- input: cases (view over the warehouse)
-- params: run_id, regime ('clamped': temperature_clamped, 'unclamped': temperature_unclamped)
-- output: lang, pos, row_index, item_id, conf, correct, gold_index, pred_index, temperature, cost_ms
-- why: no model is needed to move between regimes: max(softmax(z/T)) = 1 / sum(exp(z_i/T - max(z/T))).
--      Materialized under the name massive_cases, languages.sql then gives that regime's block.
WITH c AS (
    SELECT *, CASE $regime WHEN 'clamped' THEN temperature_clamped
                           WHEN 'unclamped' THEN temperature_unclamped END AS t
    FROM cases
    WHERE run_id = $run_id AND language_key IS NOT NULL AND question_type = 'choice' AND logits IS NOT NULL
), z AS (
    SELECT *, list_transform(logits, lambda x: x / greatest(0.001, t)) AS zs,
           CAST(list_position(logits, list_max(logits)) - 1 AS BIGINT) AS pred,
           CAST(list_position(options, json_extract_string(expected_json, '$')) - 1 AS BIGINT) AS gold
    FROM c
)
SELECT language_key AS lang,
       CAST(row_number() OVER (PARTITION BY language_key ORDER BY row_index, qid_pos) - 1 AS BIGINT) AS pos,
       row_index, item_id,
       1.0 / list_sum(list_transform(zs, lambda x: exp(x - list_max(zs)))) AS conf,
       CAST(pred = gold AS INTEGER) AS correct, gold AS gold_index, pred AS pred_index,
       t AS temperature, call_ms / CAST(chunk_size AS DOUBLE) AS cost_ms
FROM z
