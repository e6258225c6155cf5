-- compare: rank_points -- each run's point rank per group and metric (rank)
-- spec: S8.9 (rank() over the value, highest first, ties share the smaller rank; the leaderboard's rule)
-- grain: one row per (dim, key, metric, run) with a value
-- input: rank_points_in (run_index, run_id, dim, key, metric, value, n: the report's point estimates)
-- params: none
-- output: dim, key, metric, run_index, run_id, value, n, rank, position (1.. in rank order, ties by
--         run_index: the order the runs were named)
SELECT dim, key, metric, run_index, run_id, value, n,
       rank() OVER (PARTITION BY dim, key, metric ORDER BY value DESC) AS rank,
       row_number() OVER (PARTITION BY dim, key, metric ORDER BY value DESC, run_index) AS position
FROM rank_points_in
WHERE value IS NOT NULL AND NOT isnan(value)
ORDER BY dim, key, metric, position
