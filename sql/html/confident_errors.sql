-- query: confident_errors -- a run's most confident wrong answers, for the HTML report's case summary
-- spec: S4.4 (case order breaks ties: row, then `expected` order), S2.9 (correct = false)
-- grain: one row per case, at most $limit
-- input: cases
-- params: run_id, limit
-- output: row_index, qid, expected_json, predicted, confidence, language_key
SELECT row_index, qid, expected_json, predicted, confidence, language_key
FROM cases
WHERE run_id = $run_id AND correct = false AND confidence IS NOT NULL AND NOT isnan(confidence)
ORDER BY confidence DESC, row_index, qid_pos, qid
LIMIT $limit
