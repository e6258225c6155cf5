-- table: slice_cells -- the cells once per (dim, key) group they belong to, ties merged again
-- spec: S4.1, S4.2 (overall is the group ('overall', ''); every slice aggregates the same way)
-- grain: one row per (dim, key, answer_type, conf, correct)
-- input: cells, slice_map
-- params: none
-- output: dim, key, answer_type, conf, correct, n
SELECT m.dim, m.key, m.answer_type, c.conf, m.correct, sum(c.n) AS n
FROM cells c JOIN slice_map m USING (slice_set)
GROUP BY ALL
