-- compare: diff_label_drift -- cases present in both runs whose gold label differs (the data drifted)
-- spec: S9 (case-level diff); labels compared as their JSON text (S1.7 expected_json)
-- grain: one row per case with a changed label, in dataset order
-- input: diff_cases
-- params: none
-- output: case_id, row_index, line_no, qid, expected_a, expected_b, correct_a, correct_b
SELECT case_id, row_index, line_no, qid, expected_a, expected_b, correct_a, correct_b
FROM diff_cases
WHERE label_changed
ORDER BY row_index, qid_pos, case_id
