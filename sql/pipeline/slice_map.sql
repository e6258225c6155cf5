-- table: slice_map -- which (dim, key) groups each slice set belongs to: overall, then each slice
-- spec: S4.1 (keys are str() values; null is in no group; a case is in every tag group it names,
--       once per occurrence, as the reference groups), S4.2 (each group aggregates like overall)
-- grain: one row per (slice_set, dim, key), repeated for a repeated tag
-- input: cases
-- params: run_id
-- output: slice_set, dim, key
-- why: "per slice" is the same metric grouped by (dim, key); no metric is written twice.
WITH sets AS (
    SELECT slice_set, any_value(language_key) AS language_key, any_value(model_key) AS model_key,
           any_value(qid) AS qid, any_value(tags) AS tags
    FROM cases WHERE run_id = $run_id GROUP BY slice_set
)
SELECT slice_set, 'overall' AS dim, '' AS key FROM sets
UNION ALL SELECT slice_set, 'language', language_key FROM sets WHERE language_key IS NOT NULL
UNION ALL SELECT slice_set, 'model', model_key FROM sets WHERE model_key IS NOT NULL
UNION ALL SELECT slice_set, 'qid', qid FROM sets WHERE qid IS NOT NULL
UNION ALL SELECT slice_set, 'tag', t.tag FROM sets, unnest(sets.tags) AS t(tag)
