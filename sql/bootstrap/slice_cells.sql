-- table: slice_cells (bootstrap) -- every replicate's resampled cells, shaped like pipeline/slice_cells
-- spec: S9.5 (replicate b takes row r with the multiplicity the index stream gave it)
-- grain: one row per (replicate, dim, key, answer_type, conf, correct); the replicate rides in
--        `dim` as '<dim>@<replicate>' so every metric file runs unchanged on replicates
-- input: row_cells, boot_weights (replicate, row_index, w), slice_map
-- params: none
-- output: dim, key, answer_type, conf, correct, n
-- why: compose by wrapping: the point estimate and the replicates are the same metric SQL.
SELECT m.dim || '@' || CAST(w.replicate AS VARCHAR) AS dim, m.key, m.answer_type, c.conf, m.correct,
       sum(c.n * w.w) AS n
FROM row_cells c
JOIN boot_weights w USING (row_index)
JOIN slice_map m USING (slice_set)
GROUP BY ALL
