-- query: cases -- the reference `cases` list of one run, in case order
-- spec: S4.4 (row order, then `expected` order; each case with qid, language, model, tags,
--       expected, answer, confidence, correct and its per-evaluator scores), S3.7
-- grain: one row per case
-- input: cases, case_fields (the run's own per-case fields: its schema's case_fields file, else
--        report/case_fields_none.sql)
-- params: run_id, tolerances (the requested score_within tolerances, in request order)
-- output: qid, language, model, tags, expected_json, answer_json, confidence, correct,
--         choice_accuracy, noul_accuracy, score_mae, score_within (one value per tolerance), fields_json
--         (null, or a JSON object of the case's further keys)
-- engine: duckdb (a list comprehension over the bound tolerances)
SELECT qid, language, model, tags, expected_json, answer_json, confidence, correct,
       lc_accuracy_value('choice', answer_type, correct) AS choice_accuracy,
       lc_accuracy_value('noul', answer_type, correct) AS noul_accuracy, score_mae,
       [lc_score_within(score_mae, t) FOR t IN $tolerances] AS score_within, f.fields_json
FROM cases
LEFT JOIN case_fields f USING (row_index, qid_pos)
WHERE run_id = $run_id
ORDER BY row_index, qid_pos
