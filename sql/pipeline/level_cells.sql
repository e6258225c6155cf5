-- table: level_cells -- the paired cases of each group per confidence: what `levels` sorts
-- spec: S3.9 (paired = confidence and correctness present), S4.1 (a repeated tag counts twice), S4.2 (every
--       group aggregates the same way), S3.12 (NaNs are one level; -0.0 and 0.0 are one, as in cells)
-- grain: one row per (gid, conf) with paired cases; rows = its cases, hits = the correct ones
-- input: cells, slice_map, level_groups
-- params: none
-- output: gid, conf, rows, hits
-- why: from the cells straight to the levels' grain, by the group's number (level_groups), not by strings.
--      Only a confidence that more than one cell holds can meet another cell in a group; every other cell
--      is already its own (gid, conf) row in each of its groups (a repeated tag's rows are counted, not
--      repeated). So the hash aggregation runs over the tied cells alone: with full-precision confidences
--      almost none, where aggregating every (group, cell) row cost several times writing it (2M distinct
--      decisions: 3.0-3.9 s against 0.5 s; rounded, as before). Counts are BIGINT (cases), not HUGEINT.
WITH m AS (
    SELECT s.slice_set, g.gid, any_value(s.correct) AS correct, count(*) AS times
    FROM slice_map s JOIN level_groups g USING (dim, key)
    WHERE s.correct IS NOT NULL
    GROUP BY s.slice_set, g.gid
), tied_confs AS (
    SELECT conf FROM cells WHERE conf IS NOT NULL GROUP BY conf HAVING count(*) > 1
), c AS (
    SELECT slice_set, conf, n, conf IN (SELECT conf FROM tied_confs) AS tied FROM cells WHERE conf IS NOT NULL
)
SELECT m.gid, c.conf, CAST(c.n * m.times AS BIGINT) AS rows,
       CAST(CASE WHEN m.correct THEN c.n * m.times ELSE 0 END AS BIGINT) AS hits
FROM c JOIN m USING (slice_set)
WHERE NOT c.tied
UNION ALL
SELECT m.gid, c.conf, CAST(sum(c.n * m.times) AS BIGINT), CAST(sum(CASE WHEN m.correct THEN c.n * m.times ELSE 0 END) AS BIGINT)
FROM c JOIN m USING (slice_set)
WHERE c.tied
GROUP BY m.gid, c.conf
