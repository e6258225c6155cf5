-- query: tournament_survival_rate, tournament_accuracy_on_survivors -- where a tournament lost its cases
-- spec: S7.20 (survival = cases whose gold reached the final / cases; accuracy on survivors = correct /
--       survived, absent when no case survived; overall and every slice group), S7.19, S4.1, S4.2
-- grain: one row per (dim, key, metric) with at least one case; accuracy only where survived > 0
-- input: cases (view over the warehouse), slice_map (pipeline table: the case's groups)
-- params: run_id
-- output: dim, key, metric, value, n, hits
-- for_schema: laya-tournament-evals-report/1
-- why: shortlist_status is written with each case (runner.NarrowingRunner), so a group's numbers are
--      counts of its cases' statuses; choice_accuracy stays the end-to-end rate of the ordinary files.
--      The report adds this file only for runs of that config schema (for_schema).
WITH g AS (
    SELECT m.dim, m.key, count(*) AS n,
           count(*) FILTER (WHERE c.shortlist_status <> 'elimination_miss') AS survived,
           count(*) FILTER (WHERE c.shortlist_status = 'correct') AS correct
    FROM cases c JOIN slice_map m USING (slice_set)
    WHERE c.run_id = $run_id AND c.shortlist_status IS NOT NULL
    GROUP BY m.dim, m.key
)
SELECT dim, key, 'tournament_survival_rate' AS metric, CAST(survived AS DOUBLE) / CAST(n AS DOUBLE) AS value,
       n, survived AS hits
FROM g
UNION ALL
SELECT dim, key, 'tournament_accuracy_on_survivors', CAST(correct AS DOUBLE) / CAST(survived AS DOUBLE),
       survived, correct
FROM g WHERE survived > 0
