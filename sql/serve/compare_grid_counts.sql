-- query: compare_grid_counts -- how many cases each filter of the compare page's case grid keeps
-- spec: S9 (case_id joins runs of one dataset); S2.9 (correct is null when unscored)
-- grain: one row
-- input: cases
-- params: runs (the run ids in the order named)
-- output: cases, outcome_differs, prediction_differs, all_wrong
-- why: the filters of sql/serve/compare_grid.sql, counted in one lean aggregation (no lists), once per
--      set of runs (the page remembers it).
WITH per AS (
    SELECT case_id, count(correct) AS n_scored, count(*) FILTER (WHERE correct) AS n_correct,
           count(DISTINCT predicted) AS n_answers
    FROM cases WHERE list_contains($runs, run_id)
    GROUP BY case_id
)
SELECT count(*) AS cases,
       count(*) FILTER (WHERE n_correct > 0 AND n_correct < n_scored) AS outcome_differs,
       count(*) FILTER (WHERE n_answers >= 2) AS prediction_differs,
       count(*) FILTER (WHERE n_scored = len($runs) AND n_correct = 0) AS all_wrong
FROM per
