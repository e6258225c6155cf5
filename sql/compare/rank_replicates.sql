-- compare: rank_replicates -- each run's rank and every pair's difference, replicate by replicate (rank)
-- spec: S9.5 (replicate b of every run draws the same rows: the runs share their rows, seed and B, so the
--       values pair), S8.9 (the leaderboard's rank rule: rank() over the value, highest first, ties share
--       the smaller rank)
-- grain: one row per (group, metric, replicate, run) for values and ranks, per (group, metric, replicate, run
--        pair) for differences, over the replicates where every run has a value for that group and metric
-- input: rank_values (run_index: 1-based position of the run on the command line, dim, key, metric,
--        replicate, value: report.build.replicate_values of each run)
-- params: none
-- output: dim ('<dim>@<replicate>', the form bootstrap/intervals.sql reads), key, metric
--         ('<metric>#value#<i>': run i's value, over every replicate where it has one; '<metric>#rank#<i>';
--         '<metric>#diff#<i>-<j>', i < j: run i's value minus run j's), value
-- why: a replicate where some run has no value (its group drew no case) would rank the others among
--      fewer runs, so it is left out for that group and metric (intervals.sql counts what is left, B_used).
WITH runs AS (
    SELECT count(DISTINCT run_index) AS k FROM rank_values
), usable AS (
    SELECT v.*
    FROM rank_values v
    JOIN (SELECT dim, key, metric, replicate
          FROM rank_values
          WHERE value IS NOT NULL AND NOT isnan(value)
          GROUP BY ALL
          HAVING count(*) = (SELECT k FROM runs)) full_set USING (dim, key, metric, replicate)
)
SELECT dim || '@' || CAST(replicate AS VARCHAR) AS dim, key,
       metric || '#rank#' || CAST(run_index AS VARCHAR) AS metric,
       CAST(rank() OVER (PARTITION BY dim, key, metric, replicate ORDER BY value DESC) AS DOUBLE) AS value
FROM usable
UNION ALL
SELECT a.dim || '@' || CAST(a.replicate AS VARCHAR), a.key,
       a.metric || '#diff#' || CAST(a.run_index AS VARCHAR) || '-' || CAST(b.run_index AS VARCHAR),
       a.value - b.value
FROM usable a JOIN usable b
  ON a.dim = b.dim AND a.key = b.key AND a.metric = b.metric AND a.replicate = b.replicate
 AND a.run_index < b.run_index
UNION ALL
SELECT dim || '@' || CAST(replicate AS VARCHAR), key,
       metric || '#value#' || CAST(run_index AS VARCHAR), value
FROM rank_values
