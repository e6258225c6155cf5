-- table: slice_cells -- the cells once per group they belong to: overall, then each slice (S4.1)
-- spec: S4.1 (keys are str() values; null is in no group; a case is in every tag group it names,
--       once per occurrence), S4.2 (each group aggregates exactly like overall)
-- grain: one row per (dim, key, cell)
-- input: cells
-- params: none
-- output: dim, key, and the cells columns
-- why: "per slice" is the same metric grouped by (dim, key); no metric is written twice.
SELECT 'overall' AS dim, '' AS key, c.* FROM cells c
UNION ALL
SELECT 'language', c.language_key, c.* FROM cells c WHERE c.language_key IS NOT NULL
UNION ALL
SELECT 'model', c.model_key, c.* FROM cells c WHERE c.model_key IS NOT NULL
UNION ALL
SELECT 'qid', c.qid, c.* FROM cells c WHERE c.qid IS NOT NULL
UNION ALL
SELECT 'tag', t.tag, c.* FROM cells c, unnest(c.tags) AS t(tag)
