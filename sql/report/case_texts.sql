-- query: case_texts -- the reference `cases` list of one run, in case order, as the JSON text of each case
--        after its answer (report --json streams it: laya_cases/report/stream.py renders only the answer)
-- spec: S4.4 (row order, then `expected` order), S3.7; the same cases and values as report/cases.sql, which
--       builds the document's own cases (the streamed bytes equal report.dumps of that document)
-- grain: one row per case
-- input: cases, case_fields (as in report/cases.sql)
-- params: run_id, tolerances, pieces, values (tolerances: the score_within tolerances in the order of the
--         case's `scores` keys; pieces: the case's text between its fields, before the answer and after each
--         of answer, confidence, correct, expected, language, model, qid, every score and the tags; values:
--         the rendered qids, tag lists, expected, language and model texts of report/case_values.sql, a
--         list of {kind, key, text})
-- output: answer_json, rest (the case's text after its answer: numbers as repr() writes a double, NaN,
--         Infinity, -Infinity; true, false, null), fields_json (null, or a JSON object of the case's further
--         keys, which report/stream.py renders into `rest` at their sorted places)
-- engine: duckdb (CAST(DOUBLE AS VARCHAR) is the shortest round-trip text, as Python's repr:
--         tests/report/test_report_json.py checks both on edge and random doubles)
WITH v AS (
    SELECT x.kind, x.key, x.text FROM (SELECT unnest($values) AS x)
), c AS (
    SELECT row_index, qid_pos, answer_json, confidence, correct, score_mae, f.fields_json,
           lc_accuracy_value('choice', answer_type, correct) AS choice_accuracy,
           lc_accuracy_value('noul', answer_type, correct) AS noul_accuracy,
           [lc_score_within(score_mae, t) FOR t IN $tolerances] AS score_within,
           coalesce(vq.text, 'null') AS qid_text, coalesce(vt.text, 'null') AS tags_text,
           coalesce(ve.text, 'null') AS expected_text, coalesce(vl.text, 'null') AS language_text,
           coalesce(vm.text, 'null') AS model_text
    FROM cases
    LEFT JOIN case_fields f USING (row_index, qid_pos)
    LEFT JOIN v AS vq ON vq.kind = 'qid' AND vq.key = qid
    LEFT JOIN v AS vt ON vt.kind = 'tags' AND vt.key = to_json(coalesce(tags, []::VARCHAR[]))
    LEFT JOIN v AS ve ON ve.kind = 'expected' AND ve.key = expected_json
    LEFT JOIN v AS vl ON vl.kind = 'language' AND vl.key = language
    LEFT JOIN v AS vm ON vm.kind = 'model' AND vm.key = model
    WHERE run_id = $run_id
), n AS (                                   -- each double as Python's json writes it
    SELECT *,
           [CASE WHEN x IS NULL THEN 'null' WHEN isnan(x) THEN 'NaN'
                 WHEN isinf(x) THEN (CASE WHEN x > 0 THEN 'Infinity' ELSE '-Infinity' END)
                 ELSE CAST(x AS VARCHAR) END
            FOR x IN [choice_accuracy, confidence, noul_accuracy, score_mae] || score_within] AS numbers
    FROM c
)
SELECT answer_json,
       $pieces[2] || numbers[2] || $pieces[3]
       || CASE WHEN correct IS NULL THEN 'null' WHEN correct THEN 'true' ELSE 'false' END
       || $pieces[4] || expected_text || $pieces[5] || language_text || $pieces[6] || model_text
       || $pieces[7] || qid_text || $pieces[8]
       || array_to_string([numbers[i] || $pieces[8 + i] FOR i IN range(1, len(numbers) + 1)], '')
       || tags_text || $pieces[-1] AS rest, fields_json
FROM n
ORDER BY row_index, qid_pos
