-- table: slice_errors (bootstrap) -- every replicate's resampled score errors, like pipeline/slice_errors
-- spec: S9.5
-- grain: one row per (replicate, dim, key, err), the replicate riding in `dim` as '<dim>@<replicate>'
-- input: row_errors, boot_weights, slice_map
-- params: none
-- output: dim, key, err, n
SELECT m.dim || '@' || CAST(w.replicate AS VARCHAR) AS dim, m.key, e.err, sum(e.n * w.w) AS n
FROM row_errors e
JOIN boot_weights w USING (row_index)
JOIN slice_map m USING (slice_set)
GROUP BY ALL
