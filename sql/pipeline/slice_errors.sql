-- table: slice_errors -- the score-error cells once per (dim, key) group they belong to
-- spec: S3.6, S3.7, S4.1
-- grain: one row per (dim, key, err)
-- input: error_cells, slice_map
-- params: none
-- output: dim, key, err, n
SELECT m.dim, m.key, e.err, sum(e.n) AS n
FROM error_cells e JOIN slice_map m USING (slice_set)
GROUP BY ALL
