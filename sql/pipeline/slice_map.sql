-- table: slice_map -- what each slice set is, once per (dim, key) group it belongs to
-- spec: S4.1 (keys are str() values; null is in no group; a case is in every tag group it names,
--       once per occurrence, as the reference groups), S4.2 (overall is the group ('overall', ''))
-- grain: one row per (slice_set, dim, key), repeated for a repeated tag
-- input: slice_sets (written with the run: one row per slice_set id)
-- params: run_id
-- output: slice_set, answer_type, correct, dim, key
-- why: "per slice" is the same metric grouped by (dim, key); no metric is written twice.
WITH sets AS (
    SELECT slice_set, language_key, model_key, qid, tags, answer_type, correct
    FROM slice_sets WHERE run_id = $run_id
), keyed AS (
    SELECT slice_set, answer_type, correct, 'overall' AS dim, '' AS key FROM sets
    UNION ALL SELECT slice_set, answer_type, correct, 'language', language_key FROM sets WHERE language_key IS NOT NULL
    UNION ALL SELECT slice_set, answer_type, correct, 'model', model_key FROM sets WHERE model_key IS NOT NULL
    UNION ALL SELECT slice_set, answer_type, correct, 'qid', qid FROM sets WHERE qid IS NOT NULL
    UNION ALL SELECT slice_set, answer_type, correct, 'tag', t.tag FROM sets, unnest(sets.tags) AS t(tag)
)
SELECT * FROM keyed
