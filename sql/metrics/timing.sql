-- metric: latency_p50_ms, latency_p95_ms, cost_per_decision_p50_ms, cost_per_decision_p95_ms
-- spec: S3.15 (overall only; rows whose call returned; latency = the call's wall time, cost =
--       call / rows in it; p50 = median with the two middle values averaged; p95 = the
--       ((95n + 99) div 100)-th smallest)
-- grain: one row per metric, only when at least one call returned with a recorded time
-- input: decisions (one record per row is enough: every record of a row carries its call facts)
-- params: run_id
-- output: metric, value, n
WITH per_row AS (
    SELECT row_index, any_value(call_ms) AS latency,
           any_value(call_ms) / CAST(any_value(chunk_size) AS DOUBLE) AS cost
    FROM decisions
    WHERE run_id = $run_id AND call_returned AND call_ms IS NOT NULL
    GROUP BY row_index
), v AS (
    SELECT 'latency' AS what, latency AS x FROM per_row
    UNION ALL SELECT 'cost_per_decision', cost FROM per_row
), ranked AS (
    SELECT what, x, row_number() OVER (PARTITION BY what ORDER BY x) AS r, count(*) OVER (PARTITION BY what) AS n
    FROM v
), picked AS (
    SELECT what, any_value(n) AS n,
           CASE WHEN any_value(n) % 2 = 1 THEN max(CASE WHEN r = (n + 1) // 2 THEN x END)
                ELSE (max(CASE WHEN r = n // 2 THEN x END) + max(CASE WHEN r = n // 2 + 1 THEN x END)) / 2.0
           END AS p50,
           max(CASE WHEN r = (95 * n + 99) // 100 THEN x END) AS p95
    FROM ranked GROUP BY what
)
SELECT what || '_p50_ms' AS metric, p50 AS value, n FROM picked
UNION ALL
SELECT what || '_p95_ms', p95, n FROM picked
