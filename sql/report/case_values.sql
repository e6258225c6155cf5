-- query: case_values -- the distinct qids, tag lists and JSON texts (expected, language, model) of one run's
--        cases: report/stream.py renders each once as json.dumps would and hands them to report/case_texts.sql
-- spec: S4.4 (the case fields that repeat across cases)
-- grain: one row
-- input: cases
-- params: run_id
-- output: qids, tag_lists (as JSON texts, null as []), expecteds, languages, models (each a list of the
--         distinct non-null values)
-- engine: duckdb
SELECT list(DISTINCT qid) FILTER (WHERE qid IS NOT NULL) AS qids,
       list(DISTINCT to_json(coalesce(tags, []::VARCHAR[]))) AS tag_lists,
       list(DISTINCT expected_json) FILTER (WHERE expected_json IS NOT NULL) AS expecteds,
       list(DISTINCT language) FILTER (WHERE language IS NOT NULL) AS languages,
       list(DISTINCT model) FILTER (WHERE model IS NOT NULL) AS models
FROM cases
WHERE run_id = $run_id
