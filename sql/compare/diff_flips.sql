-- compare: diff_flips -- the cases whose correctness flipped between run A and run B
-- spec: S9 (case-level diff), S2.9 (correctness)
-- grain: one row per flipped case, right->wrong first, then in dataset order (row, then `expected` order)
-- input: diff_cases
-- params: none
-- output: flip, case_id, row_index, line_no, qid, language_key, expected_a, expected_b, label_changed,
--         predicted_a, predicted_b, confidence_a, confidence_b
SELECT flip, case_id, row_index, line_no, qid, language_key, expected_a, expected_b, label_changed,
       predicted_a, predicted_b, confidence_a, confidence_b
FROM diff_cases
WHERE flip IS NOT NULL
ORDER BY flip = 'right_to_wrong' DESC, row_index, qid_pos, case_id
