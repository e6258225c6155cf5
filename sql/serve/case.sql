-- query: case -- one case of a run, every stored column, for the case page of `laya-cases serve`
-- spec: S4.4 (the case record), S2.3 (options and their texts), S2.7 (confidence)
-- grain: at most one row
-- input: cases
-- params: run_id, row_index, qid
-- output: every decision column (docs/schema.md) and run_id
SELECT *
FROM cases
WHERE run_id = $run_id AND row_index = $row_index::BIGINT AND qid = $qid::VARCHAR
