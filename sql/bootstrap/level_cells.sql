-- table: level_cells (bootstrap) -- every replicate's paired cases per group and confidence, shaped like
--        pipeline/level_cells
-- spec: S9.5 (replicate b takes row r with the multiplicity the index stream gave it), S3.9, S4.1 (a
--       repeated tag counts twice)
-- grain: one row per (gid, conf) with paired cases, gid numbering a (replicate, dim, key) group
--        (bootstrap/level_groups)
-- input: row_cells, boot_weights (replicate, row_index, w; one row per replicate and row), slice_map, level_groups
-- params: none
-- output: gid, conf, rows, hits
-- why: the weights replace the counts; each slice set's groups in each replicate are found once, in a
--      small table (slice sets x groups x replicates of the batch), and the rows join it on integers. As in
--      pipeline/level_cells, only the tied cells (row_cells.tied) are aggregated: a row is in a replicate
--      once, with its multiplicity as weight, so an untied cell is already its own (gid, conf) row in
--      each of the replicate's groups.
WITH m AS (
    SELECT s.slice_set, g.replicate, g.gid, any_value(s.correct) AS correct, count(*) AS times
    FROM slice_map s JOIN level_groups g ON g.base_dim = s.dim AND g.key = s.key
    WHERE s.correct IS NOT NULL
    GROUP BY s.slice_set, g.replicate, g.gid
)
SELECT m.gid, c.conf, CAST(c.n * w.w * m.times AS BIGINT) AS rows,
       CAST(CASE WHEN m.correct THEN c.n * w.w * m.times ELSE 0 END AS BIGINT) AS hits
FROM row_cells c
JOIN boot_weights w USING (row_index)
JOIN m ON m.slice_set = c.slice_set AND m.replicate = w.replicate
WHERE c.conf IS NOT NULL AND NOT c.tied
UNION ALL
SELECT m.gid, c.conf, CAST(sum(c.n * w.w * m.times) AS BIGINT),
       CAST(sum(CASE WHEN m.correct THEN c.n * w.w * m.times ELSE 0 END) AS BIGINT)
FROM row_cells c
JOIN boot_weights w USING (row_index)
JOIN m ON m.slice_set = c.slice_set AND m.replicate = w.replicate
WHERE c.conf IS NOT NULL AND c.tied
GROUP BY m.gid, c.conf
