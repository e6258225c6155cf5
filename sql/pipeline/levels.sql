-- table: levels -- the risk-coverage curve: one row per confidence level of the paired cases
-- spec: S3.9 (paired = confidence and correctness present), S3.12 (order: +inf first, -inf after
--       every finite value, NaN last as one level), S9.3 (the curve)
-- grain: one row per (dim, key, level)
-- input: level_cells
-- params: none
-- output: dim, key, level, conf, rows, hits, accepted, cum_hits, N, coverage, risk, selective_accuracy
-- why: the cost must be a sort, whatever the number of distinct confidences. The levels of every group
--      are sorted once, as one sequence ordered by (group number, -conf) -- DuckDB sorts NaN above
--      every number, so -conf ascending is the S3.12 order -- and each group's running counts are the
--      running counts of that sequence less those of the groups before it. One window without a
--      PARTITION BY, on integer and double keys: several times faster here than partitioning by the
--      (dim, key) strings. Counts are BIGINT (cases), not the HUGEINT of a sum: narrower rows.
WITH grp AS (
    SELECT dim, key, row_number() OVER (ORDER BY dim, key) AS gid FROM (SELECT DISTINCT dim, key FROM level_cells)
), lv AS (
    SELECT grp.gid, c.conf, c.rows, c.hits FROM level_cells c JOIN grp USING (dim, key)
), before AS (      -- per group: its N, and the levels, rows and hits of every group numbered before it
    SELECT gid, N, sum(n_levels) OVER o - n_levels AS levels_before, CAST(sum(N) OVER o - N AS BIGINT) AS rows_before,
           CAST(sum(n_hits) OVER o - n_hits AS BIGINT) AS hits_before
    FROM (SELECT gid, count(*) AS n_levels, CAST(sum(rows) AS BIGINT) AS N, CAST(sum(hits) AS BIGINT) AS n_hits
          FROM lv GROUP BY gid)
    WINDOW o AS (ORDER BY gid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
), run AS (
    SELECT gid, conf, rows, hits,
           row_number() OVER w AS run_levels, CAST(sum(rows) OVER w AS BIGINT) AS run_rows,
           CAST(sum(hits) OVER w AS BIGINT) AS run_hits
    FROM lv
    WINDOW w AS (ORDER BY gid, -conf ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
), cum AS (
    SELECT r.gid, r.conf, r.rows, r.hits, b.N, r.run_levels - b.levels_before AS level,
           r.run_rows - b.rows_before AS accepted, r.run_hits - b.hits_before AS cum_hits
    FROM run r JOIN before b USING (gid)
)
SELECT grp.dim, grp.key, level, conf, rows, hits, accepted, cum_hits, N,
       CAST(accepted AS DOUBLE) / CAST(N AS DOUBLE) AS coverage,
       1.0 - CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE) AS risk,
       CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE) AS selective_accuracy
FROM cum JOIN grp USING (gid)
