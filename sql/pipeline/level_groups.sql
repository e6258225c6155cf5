-- table: level_groups -- the (dim, key) groups of the risk-coverage curves, numbered
-- spec: S4.1, S4.2 (the groups), S3.9 (only cases with a correctness can be paired)
-- grain: one row per (dim, key) group holding cases with a correctness
-- input: slice_map
-- params: none
-- output: gid, dim, key
-- why: `level_cells` and `levels` carry this small integer instead of the (dim, key) strings: with
--      full-precision confidences they have about one row per case per group, and the strings made
--      every one of those rows wider to aggregate, sort, store and read back. The readers of `levels`
--      name their groups through this table after they aggregate.
SELECT CAST(row_number() OVER (ORDER BY dim, key) AS BIGINT) AS gid, dim, key
FROM (SELECT DISTINCT dim, key FROM slice_map WHERE correct IS NOT NULL)
