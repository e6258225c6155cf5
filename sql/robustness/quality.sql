-- table: robustness_quality -- accuracy per variant kind over a robustness run's labelled cases
-- spec: S7.16 (`quality` per kind: n_labelled, and accuracy only when n_labelled > 0), S7.14
-- grain: one row per (kind, key) with labelled cases; key as in sql/robustness/quality_cells.sql
-- input: slice_cells (sql/robustness/quality_cells.sql)
-- params: none
-- output: kind, key, n_labelled, hits, accuracy
SELECT dim AS kind, key,
       sum(n) AS n_labelled,
       sum(CASE WHEN correct THEN n ELSE 0 END) AS hits,
       CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS accuracy
FROM slice_cells
GROUP BY dim, key
ORDER BY dim, key
