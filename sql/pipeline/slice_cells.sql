-- table: slice_cells -- the cells once per (dim, key) group they belong to, ties merged again
-- spec: S4.1, S4.2 (overall is the group ('overall', ''); every slice aggregates the same way)
-- grain: one row per (dim, key, answer_type, conf, correct)
-- input: cells, slice_map
-- params: none
-- output: dim, key, answer_type, conf, correct, n
-- why: the aggregation groups by a small integer naming (dim, key, answer_type, correct) and the
--      confidence, not by the strings: with full-precision confidences every cell is its own row.
--      n is a BIGINT (a count of cases), not the HUGEINT a sum would give: half the width per row.
WITH m AS (
    SELECT slice_set, dim, key, answer_type, correct,
           dense_rank() OVER (ORDER BY dim, key, answer_type, correct) AS cell_group
    FROM slice_map
), agg AS (
    SELECT m.cell_group, c.conf, CAST(sum(c.n) AS BIGINT) AS n
    FROM cells c JOIN m USING (slice_set)
    GROUP BY m.cell_group, c.conf
), named AS (
    SELECT DISTINCT cell_group, dim, key, answer_type, correct FROM m
)
SELECT named.dim, named.key, named.answer_type, agg.conf, named.correct, agg.n
FROM agg JOIN named USING (cell_group)
