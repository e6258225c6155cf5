-- table: levels -- the risk-coverage curve: one row per confidence level of the paired cases
-- spec: S3.9 (paired = confidence and correctness present), S3.12 (order: +inf first, -inf after
--       every finite value, NaN last as one level), S9.3 (the curve)
-- grain: one row per (gid, level); level_groups names the group
-- input: level_cells, level_starts
-- params: none
-- output: gid, level, conf, rows, hits, accepted, cum_hits, N
-- engine: spark (overrides sql/pipeline/levels.sql, whose running counts take the rows in the order
--         a subquery sorted them: DuckDB keeps that order, Spark promises nothing. Here the window sorts
--         by (gid, -conf) itself; Spark, like DuckDB, sorts NaN above every number. The same rows:
--         tests/query/test_levels_order.py runs both files on DuckDB)
WITH run AS (
    SELECT gid, conf, rows, hits,
           row_number() OVER w AS run_levels, CAST(sum(rows) OVER w AS BIGINT) AS run_rows,
           CAST(sum(hits) OVER w AS BIGINT) AS run_hits
    FROM level_cells
    WINDOW w AS (ORDER BY gid, -conf ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT r.gid, r.run_levels - b.levels_before AS level, r.conf, r.rows, r.hits,
       r.run_rows - b.rows_before AS accepted, r.run_hits - b.hits_before AS cum_hits, b.N
FROM run r JOIN level_starts b USING (gid)
