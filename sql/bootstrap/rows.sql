-- query: rows -- the dataset rows a bootstrap resamples, in row order (stream position k = k-th row)
-- spec: S9.5 (the resampling unit is the dataset row; the index stream draws positions 0..n-1)
-- grain: one row per dataset row that has a case
-- input: cases
-- params: run_id
-- output: row_index
SELECT DISTINCT row_index FROM cases WHERE run_id = $run_id ORDER BY row_index
