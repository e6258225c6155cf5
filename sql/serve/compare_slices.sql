-- query: compare_slices -- each run's accuracy per group over the cases two or more of the runs scored
-- spec: S3.4-S3.5 (accuracy: the share of scored cases that are correct; choice and noul pooled);
--       S4.1 (slice keys; null is in no group); S9 (case_id joins runs of one dataset)
-- grain: one row per (dim, key, run_index) with at least one scored compared case in the group
-- input: cases
-- params: runs, dim (runs: the run ids in the order named, run_index 1..K; dim: language, model, qid,
--         tag, or null for overall only, checked by the caller)
-- output: dim, key, run_index, run_id, scored, hits, accuracy
-- why: the numbers of `stability RUNS --by DIM --json`'s run_accuracy (sql/stability/run_accuracy.sql):
--      a case counts when at least two runs scored it, its keys are those of the first run named that has
--      it; read straight from the runs' cases in one aggregation (the stability tables' per-(case, run)
--      status is not needed here, and building them takes seconds at 1M decisions a run).
WITH named AS (
    SELECT CAST($runs[i] AS VARCHAR) AS run_id, CAST(i AS INTEGER) AS run_index
    FROM range(1, len($runs) + 1) AS t(i)
),
c AS (
    SELECT c.case_id, n.run_index, n.run_id, c.correct, c.qid, c.language_key, c.model_key, c.tags
    FROM cases c JOIN named n ON c.run_id = n.run_id
),
k AS (
    SELECT case_id, first(qid ORDER BY run_index) AS qid, first(language_key ORDER BY run_index) AS language_key,
           first(model_key ORDER BY run_index) AS model_key, first(list_distinct(tags) ORDER BY run_index) AS tags
    FROM c GROUP BY case_id HAVING count(correct) >= 2
),
grouped AS (
    SELECT 'overall' AS dim, '' AS key, case_id FROM k
    UNION ALL SELECT 'language', language_key, case_id FROM k WHERE $dim = 'language' AND language_key IS NOT NULL
    UNION ALL SELECT 'model', model_key, case_id FROM k WHERE $dim = 'model' AND model_key IS NOT NULL
    UNION ALL SELECT 'qid', qid, case_id FROM k WHERE $dim = 'qid'
    UNION ALL SELECT 'tag', t.tag, case_id FROM k, unnest(k.tags) AS t(tag) WHERE $dim = 'tag'
)
SELECT g.dim, g.key, c.run_index, c.run_id, count(*) AS scored, count(*) FILTER (WHERE c.correct) AS hits,
       count(*) FILTER (WHERE c.correct) / count(*) AS accuracy
FROM grouped g JOIN c ON c.case_id = g.case_id
WHERE c.correct IS NOT NULL
GROUP BY g.dim, g.key, c.run_index, c.run_id
ORDER BY g.dim = 'overall' DESC, g.dim, g.key, c.run_index
