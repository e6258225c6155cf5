-- table: diff_cases -- two runs' cases joined on case identity: one row per case in either run
-- spec: S9 (case-level diff, a laya-cases extension); S1.7 (the case record); case_id is a digest
--       of (state, qid, question body), stable across runs of the same dataset
-- grain: one row per case_id present in run A or run B (case_id is unique within a run)
-- input: cases
-- params: run_a, run_b
-- output: case_id, in_a, in_b, row_index, line_no, qid_pos, qid, language_key, model_key, tags,
--         expected_a, expected_b, label_changed, predicted_a, predicted_b, correct_a, correct_b,
--         paired, flip ('right_to_wrong'|'wrong_to_right'|null), confidence_a, confidence_b
-- why: slice keys and positions are read from run A (the reference side of the diff); a case is
--      paired when both runs scored it (correctness non-null on both sides, S2.9).
WITH a AS (SELECT * FROM cases WHERE run_id = $run_a),
     b AS (SELECT * FROM cases WHERE run_id = $run_b)
SELECT coalesce(a.case_id, b.case_id) AS case_id,
       a.case_id IS NOT NULL AS in_a,
       b.case_id IS NOT NULL AS in_b,
       coalesce(a.row_index, b.row_index) AS row_index,
       coalesce(a.line_no, b.line_no) AS line_no,
       coalesce(a.qid_pos, b.qid_pos) AS qid_pos,
       coalesce(a.qid, b.qid) AS qid,
       CASE WHEN a.case_id IS NOT NULL THEN a.language_key ELSE b.language_key END AS language_key,
       CASE WHEN a.case_id IS NOT NULL THEN a.model_key ELSE b.model_key END AS model_key,
       list_distinct(CASE WHEN a.case_id IS NOT NULL THEN a.tags ELSE b.tags END) AS tags,
       a.expected_json AS expected_a,
       b.expected_json AS expected_b,
       (a.case_id IS NOT NULL AND b.case_id IS NOT NULL
        AND a.expected_json IS DISTINCT FROM b.expected_json) AS label_changed,
       a.predicted AS predicted_a,
       b.predicted AS predicted_b,
       a.correct AS correct_a,
       b.correct AS correct_b,
       coalesce(a.correct IS NOT NULL AND b.correct IS NOT NULL, false) AS paired,
       CASE WHEN a.correct AND NOT b.correct THEN 'right_to_wrong'
            WHEN NOT a.correct AND b.correct THEN 'wrong_to_right' END AS flip,
       a.confidence AS confidence_a,
       b.confidence AS confidence_b
FROM a FULL OUTER JOIN b ON a.case_id = b.case_id
