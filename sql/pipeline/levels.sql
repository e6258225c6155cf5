-- table: levels -- the risk-coverage curve: one row per confidence level of the paired cases
-- spec: S3.9 (paired = confidence and correctness present), S3.12 (order: +inf first, -inf after
--       every finite value, NaN last as one level), S9.3 (the curve)
-- grain: one row per (gid, level); level_groups names the group
-- input: level_cells, level_starts
-- params: none
-- output: gid, level, conf, rows, hits, accepted, cum_hits, N
-- stored: view (DuckDB: a temp view, not a table. Its one reader in the report, level_points, reads it once
--         as it streams out of the sort; with full-precision confidences the table was 39M rows at 10M
--         decisions, written out past the memory limit and read back by each reader. Spark checkpoints it.)
-- why: the cost must be a sort, whatever the number of distinct confidences. Every group's levels are
--      sorted once, as one sequence ordered by (gid, -conf) -- DuckDB sorts NaN above every number, so
--      -conf ascending is the S3.12 order -- and each group's running counts are the running counts of
--      that sequence less those of the groups before it (level_starts). The running counts are DuckDB's
--      streaming window (an OVER with no ORDER BY and no PARTITION BY), which reads the sorted rows in
--      order on one thread: about twice as fast here as a window that sorts them itself (sql/_spark/
--      has that version, for Spark, which promises no such order; tests/query/test_levels_order.py runs both).
--      The table stays narrow (no strings, no ratios: its readers compute those for the rows they
--      keep, with sql/macros/curve_ratios.sql), as it has one row per case per group with
--      full-precision confidences and is read back by three files. Counts are BIGINT (cases), not the HUGEINT of a sum.
WITH run AS (
    SELECT gid, conf, rows, hits,
           row_number() OVER () AS run_levels, CAST(sum(rows) OVER w AS BIGINT) AS run_rows,
           CAST(sum(hits) OVER w AS BIGINT) AS run_hits
    FROM (SELECT gid, conf, rows, hits FROM level_cells ORDER BY gid, -conf)
    WINDOW w AS (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT r.gid, r.run_levels - b.levels_before AS level, r.conf, r.rows, r.hits,
       r.run_rows - b.rows_before AS accepted, r.run_hits - b.hits_before AS cum_hits, b.N
FROM run r JOIN level_starts b USING (gid)
