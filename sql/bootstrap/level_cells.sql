-- table: level_cells (bootstrap) -- every replicate's paired cases per group and confidence, shaped like
--        pipeline/level_cells
-- spec: S9.5 (replicate b takes row r with the multiplicity the index stream gave it), S3.9
-- grain: one row per (replicate, dim, key, conf) with paired cases; the replicate rides in `dim` as
--        '<dim>@<replicate>' (as bootstrap/slice_cells), so `levels` and its metrics run unchanged
-- input: row_cells, boot_weights (replicate, row_index, w), slice_map
-- params: none
-- output: dim, key, conf, rows, hits
SELECT m.dim || '@' || CAST(w.replicate AS VARCHAR) AS dim, m.key, c.conf,
       CAST(sum(c.n * w.w) AS BIGINT) AS rows,
       CAST(sum(CASE WHEN m.correct THEN c.n * w.w ELSE 0 END) AS BIGINT) AS hits
FROM row_cells c
JOIN boot_weights w USING (row_index)
JOIN slice_map m USING (slice_set)
WHERE c.conf IS NOT NULL AND m.correct IS NOT NULL
GROUP BY ALL
