-- query: case_types -- a run's cases counted per answer type, for the HTML report's case summary
-- spec: S4.4 (the case list, summarised instead of embedded), S2.9 (correct: true, false or null)
-- grain: one row per answer type
-- input: cases
-- params: run_id
-- output: answer_type, n, n_correct, n_incorrect, n_unscored
SELECT coalesce(answer_type, '(none)') AS answer_type, count(*) AS n,
       count(*) FILTER (WHERE correct) AS n_correct,
       count(*) FILTER (WHERE NOT correct) AS n_incorrect,
       count(*) FILTER (WHERE correct IS NULL) AS n_unscored
FROM cases
WHERE run_id = $run_id
GROUP BY ALL
ORDER BY answer_type
