-- table: diff_units -- the paired cases' counts per group and dataset row: what a bootstrap replicate adds up
-- spec: S9.5 (resampling unit: the dataset row, all its cases move together)
-- grain: one row per (dim, key, unit) with at least one paired case
-- input: diff_slice_cases
-- params: none
-- output: dim, key, unit (the position of the row's row_index among the paired rows, ascending: the
--         value randrange(n) draws for it), n, hits_a, hits_b
-- why: built once; its rows are grouped into classes of equal counts (diff_unit_classes.sql), which
--      every batch of replicates (sql/compare/diff_replicates.sql) joins, so memory stays flat in B.
WITH units AS (
    SELECT row_index, CAST(row_number() OVER (ORDER BY row_index) - 1 AS BIGINT) AS unit
    FROM (SELECT DISTINCT row_index FROM diff_slice_cases WHERE dim = 'overall' AND paired)
)
SELECT s.dim, s.key, u.unit,
       count(*) AS n,
       count(*) FILTER (WHERE s.correct_a) AS hits_a,
       count(*) FILTER (WHERE s.correct_b) AS hits_b
FROM diff_slice_cases s JOIN units u ON u.row_index = s.row_index
WHERE s.paired
GROUP BY s.dim, s.key, u.unit
