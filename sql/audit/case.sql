-- query: audit_case -- the case a relabel names: one run's record of (dataset row, question)
-- spec: S1.7 (the case record), S2.9 (the label types correctness reads)
-- grain: at most one row (a case_id is unique within a run; a failed row has no case)
-- input: cases
-- params: run_id, row_index, qid
-- output: case_id, row_index, line_no, qid, question_type, options, expected_json
SELECT case_id, row_index, line_no, qid, question_type, options, expected_json
FROM cases
WHERE run_id = $run_id AND row_index = $row_index AND qid = $qid
