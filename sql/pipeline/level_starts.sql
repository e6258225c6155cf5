-- table: level_starts -- where each group starts in the one sequence of every group's levels
-- spec: S3.9 (N = the group's paired cases), S3.12 (levels), S9.3 (the curve)
-- grain: one row per gid with paired cases
-- input: level_cells
-- params: none
-- output: gid, N, n_levels, levels_before, rows_before, hits_before
-- why: `levels` numbers the levels of every group, ordered by (gid, -conf), as one sequence; a group's
--      own level numbers and running counts are the sequence's less the levels, rows and hits of every
--      group numbered before it, which are these. (Both versions of `levels`, DuckDB's and Spark's, read them;
--      `level_points` reads n_levels.)
SELECT gid, N, n_levels, sum(n_levels) OVER o - n_levels AS levels_before, CAST(sum(N) OVER o - N AS BIGINT) AS rows_before,
       CAST(sum(n_hits) OVER o - n_hits AS BIGINT) AS hits_before
FROM (SELECT gid, count(*) AS n_levels, CAST(sum(rows) AS BIGINT) AS N, CAST(sum(hits) AS BIGINT) AS n_hits
      FROM level_cells GROUP BY gid)
WINDOW o AS (ORDER BY gid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
