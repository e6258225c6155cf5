-- table: robustness_languages -- the languages of a robustness run and what its error records say about each
-- spec: S7.16 (per language: a failed language is an error, the others are kept), S7.14 (a vector that is
--       not a distribution is an error record)
-- grain: one row per language key of the run's records ('' for rows without a language)
-- input: decisions (view over the warehouse)
-- params: run_id
-- output: language, n_cases, n_errors, first_error (the error of the lowest row index)
SELECT coalesce(language_key, '') AS language,
       count(*) FILTER (WHERE error IS NULL AND qid IS NOT NULL) AS n_cases,
       count(*) FILTER (WHERE error IS NOT NULL) AS n_errors,
       arg_min(error, row_index) FILTER (WHERE error IS NOT NULL) AS first_error
FROM decisions
WHERE run_id = $run_id
GROUP BY ALL
ORDER BY language
