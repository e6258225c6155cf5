-- query: shortlist_recall_at_k, shortlist_accuracy_on_recalled -- where a shortlist run lost its cases
-- spec: S7.19 (recall = cases whose gold retrieval kept / cases; accuracy on recalled = correct /
--       recalled, absent when recalled = 0; overall and every slice group), S4.1, S4.2
-- grain: one row per (dim, key, metric) with at least one case; accuracy only where recalled > 0
-- input: cases (view over the warehouse), slice_map (pipeline table: the case's groups)
-- params: run_id
-- output: dim, key, metric, value, n, hits
-- for_schema: laya-shortlist-evals-report/1
-- why: shortlist_status is written with each case (runner.NarrowingRunner), so a group's numbers are
--      counts of its cases' statuses; choice_accuracy stays the end-to-end rate of the ordinary files.
--      The report adds this file only for runs of that config schema (for_schema).
WITH g AS (
    SELECT m.dim, m.key, count(*) AS n,
           count(*) FILTER (WHERE c.shortlist_status <> 'retrieval_miss') AS recalled,
           count(*) FILTER (WHERE c.shortlist_status = 'correct') AS correct
    FROM cases c JOIN slice_map m USING (slice_set)
    WHERE c.run_id = $run_id AND c.shortlist_status IS NOT NULL
    GROUP BY m.dim, m.key
)
SELECT dim, key, 'shortlist_recall_at_k' AS metric, CAST(recalled AS DOUBLE) / CAST(n AS DOUBLE) AS value,
       n, recalled AS hits
FROM g
UNION ALL
SELECT dim, key, 'shortlist_accuracy_on_recalled', CAST(correct AS DOUBLE) / CAST(recalled AS DOUBLE),
       recalled, correct
FROM g WHERE recalled > 0
