-- table: row_sums -- one run's counts and partial exact sums per dataset row, slice set and reliability bin
-- spec: S9.5 (the resampling unit is the dataset row), S3.3, S9.8 (partial sums add up exactly)
-- grain: one row per distinct (row_index, slice_set, bin); bin as in pipeline/slice_sums.sql
-- input: row_cells, slice_map
-- params: none
-- output: row_index, slice_set, bin, part (the STRUCT of sql/macros/partial_sums.sql)
-- why: built once per bootstrap; a replicate then multiplies each row's partial sums by the row's weight
--      (bootstrap/slice_sums.sql) instead of splitting every case's confidence into limbs again.
WITH sets AS (
    SELECT DISTINCT slice_set, correct FROM slice_map
), x AS (
    SELECT c.row_index, c.slice_set, c.conf, c.n, lc_reliability_bin(c.conf) AS bin,
           lc_sq_error(c.conf, s.correct) AS sq
    FROM row_cells c JOIN sets s USING (slice_set)
)
SELECT row_index, slice_set, bin, lc_partial_sums(conf, sq, n) AS part FROM x GROUP BY row_index, slice_set, bin
