-- table: level_cells (bootstrap) -- every replicate's paired cases per group and confidence, shaped like
--        pipeline/level_cells
-- spec: S9.5 (replicate b takes row r with the multiplicity the index stream gave it), S3.9
-- grain: one row per (gid, conf) with paired cases, gid numbering a (replicate, dim, key) group
--        (bootstrap/level_groups)
-- input: row_cells, boot_weights (replicate, row_index, w), slice_map, level_groups
-- params: none
-- output: gid, conf, rows, hits
-- why: the weights replace the counts; each slice set's groups in each replicate are found once, in a
--      small table (slice sets x groups x replicates of the batch), and the rows join it on integers.
WITH m AS (
    SELECT s.slice_set, s.correct, g.replicate, g.gid
    FROM slice_map s JOIN level_groups g ON g.base_dim = s.dim AND g.key = s.key
    WHERE s.correct IS NOT NULL
)
SELECT m.gid, c.conf, CAST(sum(c.n * w.w) AS BIGINT) AS rows,
       CAST(sum(CASE WHEN m.correct THEN c.n * w.w ELSE 0 END) AS BIGINT) AS hits
FROM row_cells c
JOIN boot_weights w USING (row_index)
JOIN m ON m.slice_set = c.slice_set AND m.replicate = w.replicate
WHERE c.conf IS NOT NULL
GROUP BY m.gid, c.conf
