-- table: level_cells -- the paired cases of each (dim, key) group per confidence: what `levels` sorts
-- spec: S3.9 (paired = confidence and correctness present), S4.1, S4.2 (every group aggregates the same way)
-- grain: one row per (dim, key, conf) with paired cases; rows = its cases, hits = the correct ones
-- input: cells, slice_map
-- params: none
-- output: dim, key, conf, rows, hits
-- why: one aggregation from the cells straight to the levels' grain, grouped by a small integer naming
--      (dim, key) and the confidence (not the strings); with full-precision confidences nearly every
--      cell is its own row, so a second pass through slice_cells' grain (answer type and correctness
--      apart) cost as much again. Counts are BIGINT (cases), not the HUGEINT of a sum.
WITH m AS (
    SELECT slice_set, dim, key, correct, dense_rank() OVER (ORDER BY dim, key) AS gid
    FROM slice_map WHERE correct IS NOT NULL
), agg AS (
    SELECT m.gid, c.conf, CAST(sum(c.n) AS BIGINT) AS rows,
           CAST(sum(CASE WHEN m.correct THEN c.n ELSE 0 END) AS BIGINT) AS hits
    FROM cells c JOIN m USING (slice_set)
    WHERE c.conf IS NOT NULL
    GROUP BY m.gid, c.conf
), named AS (
    SELECT DISTINCT gid, dim, key FROM m
)
SELECT named.dim, named.key, agg.conf, agg.rows, agg.hits
FROM agg JOIN named USING (gid)
