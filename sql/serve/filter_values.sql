-- query: filter_values -- the slice keys a run's cases page can filter on, from its slice sets
-- spec: S4.1 (slice keys: language, model, qid, tag)
-- grain: one row per (dimension, key)
-- input: slice_sets
-- params: run_id
-- output: dim, value
SELECT DISTINCT dim, value FROM (
    SELECT 'language' AS dim, language_key AS value FROM slice_sets WHERE run_id = $run_id
    UNION ALL SELECT 'model', model_key FROM slice_sets WHERE run_id = $run_id
    UNION ALL SELECT 'qid', qid FROM slice_sets WHERE run_id = $run_id
    UNION ALL SELECT 'tag', unnest(tags) FROM slice_sets WHERE run_id = $run_id
)
WHERE value IS NOT NULL
ORDER BY dim, value
