-- table: stability_slice_cases -- the cases of the stability comparison once per group: overall, then the --by dimension
-- spec: S4.1 (slice keys are str() values; null is in no group), S9 (case-level comparison)
-- grain: one row per (dim, key, case); a case is in a tag group once even if its row repeats the tag
-- input: stability_cases
-- params: dim (language, model, qid, tag, or null for overall only; checked against the allow-list by the
--         caller)
-- output: dim, key, and the stability_cases columns
SELECT 'overall' AS dim, '' AS key, s.* FROM stability_cases s
UNION ALL
SELECT 'language', s.language_key, s.* FROM stability_cases s WHERE $dim = 'language' AND s.language_key IS NOT NULL
UNION ALL
SELECT 'model', s.model_key, s.* FROM stability_cases s WHERE $dim = 'model' AND s.model_key IS NOT NULL
UNION ALL
SELECT 'qid', s.qid, s.* FROM stability_cases s WHERE $dim = 'qid'
UNION ALL
SELECT 'tag', t.tag, s.* FROM stability_cases s, unnest(s.tags) AS t(tag) WHERE $dim = 'tag'
