-- table: diff_slice_cases -- the cases both runs have, once per group: overall, then the --by dimension
-- spec: S4.1 (slice keys are str() values; null is in no group), S9 (case-level diff)
-- grain: one row per (dim, key, case) with the case in both runs; a case is in a tag group once
--        even if its row repeats the tag
-- input: diff_cases
-- params: dim (language, model, qid, tag, or null for overall only; checked against the allow-list
--         by the caller)
-- output: dim, key, and the diff_cases columns
SELECT 'overall' AS dim, '' AS key, d.* FROM diff_cases d WHERE d.in_a AND d.in_b
UNION ALL
SELECT 'language', d.language_key, d.* FROM diff_cases d
WHERE d.in_a AND d.in_b AND $dim = 'language' AND d.language_key IS NOT NULL
UNION ALL
SELECT 'model', d.model_key, d.* FROM diff_cases d
WHERE d.in_a AND d.in_b AND $dim = 'model' AND d.model_key IS NOT NULL
UNION ALL
SELECT 'qid', d.qid, d.* FROM diff_cases d
WHERE d.in_a AND d.in_b AND $dim = 'qid'
UNION ALL
SELECT 'tag', t.tag, d.* FROM diff_cases d, unnest(d.tags) AS t(tag)
WHERE d.in_a AND d.in_b AND $dim = 'tag'
