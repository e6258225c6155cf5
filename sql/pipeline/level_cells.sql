-- table: level_cells -- the paired cases of each group per confidence: what `levels` sorts
-- spec: S3.9 (paired = confidence and correctness present), S4.1, S4.2 (every group aggregates the same way)
-- grain: one row per (gid, conf) with paired cases; rows = its cases, hits = the correct ones
-- input: cells, slice_map, level_groups
-- params: none
-- output: gid, conf, rows, hits
-- why: one aggregation from the cells straight to the levels' grain, grouped by the group's number
--      (level_groups) and the confidence, not by strings; with full-precision confidences nearly every
--      cell is its own row, so a second pass through slice_cells' grain (answer type and correctness
--      apart) cost as much again. Counts are BIGINT (cases), not the HUGEINT of a sum.
WITH m AS (
    SELECT s.slice_set, s.correct, g.gid
    FROM slice_map s JOIN level_groups g USING (dim, key)
    WHERE s.correct IS NOT NULL
)
SELECT m.gid, c.conf, CAST(sum(c.n) AS BIGINT) AS rows,
       CAST(sum(CASE WHEN m.correct THEN c.n ELSE 0 END) AS BIGINT) AS hits
FROM cells c JOIN m USING (slice_set)
WHERE c.conf IS NOT NULL
GROUP BY m.gid, c.conf
