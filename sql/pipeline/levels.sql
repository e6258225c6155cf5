-- table: levels -- the risk-coverage curve: one row per confidence level of the paired cases
-- spec: S3.9 (paired = confidence and correctness present), S3.12 (order: +inf first, -inf after
--       every finite value, NaN last as one level), S9.3 (the curve)
-- grain: one row per (dim, key, level)
-- input: slice_cells
-- params: none
-- output: dim, key, level, conf, rows, hits, accepted, cum_hits, N, coverage, risk, selective_accuracy
WITH lv AS (
    SELECT dim, key, conf, sum(n) AS rows, sum(CASE WHEN correct THEN n ELSE 0 END) AS hits
    FROM slice_cells
    WHERE conf IS NOT NULL AND correct IS NOT NULL
    GROUP BY dim, key, conf
), cum AS (
    SELECT dim, key, conf, rows, hits,
           row_number() OVER w AS level,
           sum(rows) OVER w AS accepted,
           sum(hits) OVER w AS cum_hits,
           sum(rows) OVER (PARTITION BY dim, key) AS N
    FROM lv
    WINDOW w AS (PARTITION BY dim, key ORDER BY isnan(conf), conf DESC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT dim, key, level, conf, rows, hits, accepted, cum_hits, N,
       CAST(accepted AS DOUBLE) / CAST(N AS DOUBLE) AS coverage,
       1.0 - CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE) AS risk,
       CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE) AS selective_accuracy
FROM cum
