-- metric: latency_p50_ms, latency_p95_ms, cost_per_decision_p50_ms, cost_per_decision_p95_ms
-- spec: S3.15 (overall only; rows whose call returned; latency = the call's wall time, cost =
--       call / rows in it; p50 = median with the two middle values averaged; p95 = the
--       ((95n + 99) div 100)-th smallest)
-- grain: one row per metric, only when at least one call returned with a recorded time
-- input: decisions (one record per row: the one at qid_pos 0, or the row's only record)
-- params: run_id
-- kind: timing
-- family: timing 1
-- output: metric, value, n
WITH per_row AS (
    SELECT call_ms AS latency, call_ms / CAST(chunk_size AS DOUBLE) AS cost
    FROM decisions
    WHERE run_id = $run_id AND call_returned AND call_ms IS NOT NULL
      AND (qid_pos = 0 OR qid_pos IS NULL)
), v AS (      -- values with their multiplicity: calls are shared by the rows of a chunk
    SELECT 'latency' AS what, latency AS x, count(*) AS c FROM per_row GROUP BY latency
    UNION ALL
    SELECT 'cost_per_decision', cost, count(*) FROM per_row GROUP BY cost
), ranked AS ( -- each distinct value covers the ranks (upto - c, upto]
    SELECT what, x, c,
           sum(c) OVER (PARTITION BY what ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
           sum(c) OVER (PARTITION BY what) AS n
    FROM v
), picked AS ( -- the value at rank r
    SELECT what, any_value(n) AS n,
           max(CASE WHEN upto - c < (n + 1) // 2 AND (n + 1) // 2 <= upto THEN x END) AS lo,
           max(CASE WHEN upto - c < n // 2 + 1 AND n // 2 + 1 <= upto THEN x END) AS hi,
           max(CASE WHEN upto - c < (95 * n + 99) // 100 AND (95 * n + 99) // 100 <= upto THEN x END) AS p95
    FROM ranked GROUP BY what
)
SELECT what || '_p50_ms' AS metric, CASE WHEN n % 2 = 1 THEN lo ELSE (lo + hi) / 2.0 END AS value, n FROM picked
UNION ALL
SELECT what || '_p95_ms', p95, n FROM picked
