-- table: level_groups (bootstrap) -- every replicate's groups, numbered, shaped like pipeline/level_groups
-- spec: S9.5 (each replicate is a report of its own), S4.1, S4.2 (the groups), S3.9
-- grain: one row per (replicate, dim, key) group holding cases with a correctness; the replicate rides in
--        `dim` as '<dim>@<replicate>' (as bootstrap/slice_cells)
-- input: slice_map, boot_weights (replicate, row_index, w)
-- params: none
-- output: gid, dim, key, replicate, base_dim
-- why: numbered as pipeline/level_groups numbers the point estimate's groups, so `levels` and its readers
--      run unchanged on every replicate; `replicate` and `base_dim` let bootstrap/level_cells find a
--      slice set's groups without building a string per row.
WITH groups AS (
    SELECT DISTINCT dim, key FROM slice_map WHERE correct IS NOT NULL
), replicates AS (
    SELECT DISTINCT replicate FROM boot_weights
)
SELECT CAST(row_number() OVER (ORDER BY g.dim, g.key, r.replicate) AS BIGINT) AS gid,
       g.dim || '@' || CAST(r.replicate AS VARCHAR) AS dim, g.key, r.replicate, g.dim AS base_dim
FROM groups g, replicates r
