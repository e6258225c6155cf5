-- table: row_cells -- one run's cases aggregated per dataset row, slice set and confidence
-- spec: S9.5 (the resampling unit is the dataset row: all cases of a row move together), S3.12 (NaNs
--       are one confidence; -0.0 and 0.0 are one)
-- grain: one row per distinct (row_index, slice_set, conf)
-- input: cases
-- params: run_id
-- output: row_index, slice_set, conf, n, tied
-- why: `tied` (another row cell holds the same confidence) is found once per run here, not in every
--      batch of replicates: bootstrap/level_cells aggregates the tied cells alone.
WITH r AS (
    SELECT row_index, slice_set, confidence + 0.0 AS conf, count(*) AS n
    FROM cases
    WHERE run_id = $run_id
    GROUP BY ALL
)
SELECT row_index, slice_set, conf, n,
       conf IN (SELECT conf FROM r WHERE conf IS NOT NULL GROUP BY conf HAVING count(*) > 1) AS tied
FROM r
