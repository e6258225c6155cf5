-- table: case_fields -- no case of the run has fields of its own (a run of a schema without a case_fields file)
-- spec: S4.4 (a case's fields), S7.19 (benchmarks add theirs: sql/shortlist/case_fields.sql)
-- grain: no row
-- input: none
-- params: none
-- output: row_index, qid_pos, fields_json
SELECT CAST(NULL AS BIGINT) AS row_index, CAST(NULL AS BIGINT) AS qid_pos, CAST(NULL AS VARCHAR) AS fields_json
WHERE false
