-- query: case -- one case of a run, every stored column, for the case page of `laya-cases serve`
-- spec: S4.4 (the case record), S2.3 (options and their texts), S2.7 (confidence)
-- grain: at most one row
-- input: cases, runs, inputs
-- params: run_id, row_index, qid
-- output: every decision column (docs/schema.md), run_id, and input_json: the dataset row the case came
--         from (state, questions, expected, ...; store/inputs.py), null where the run's inputs are not stored
-- why: the inputs are kept once per labelled-rows digest, so the row is found through the run's digest
SELECT c.*, i.row_json AS input_json
FROM cases c
JOIN runs r ON r.run_id = c.run_id
LEFT JOIN inputs i ON i.labelled_rows_sha256 = r.labelled_rows_sha256 AND i.row_index = c.row_index
WHERE c.run_id = $run_id AND c.row_index = $row_index::BIGINT AND c.qid = $qid::VARCHAR
