-- query: answer_types -- how many of a run's cases are score answers (for the S3.7 warning)
-- spec: S3.7 (a requested score_within_<tol> with no value names "<s> of <n> answered case(s) are
--       score answers")
-- grain: one row
-- input: cases
-- params: run_id
-- output: n_score, n_cases
SELECT count(*) FILTER (WHERE answer_type = 'score') AS n_score, count(*) AS n_cases
FROM cases
WHERE run_id = $run_id
