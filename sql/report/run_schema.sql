-- query: run_schema -- the report schema a run was committed under (decides a benchmark's metrics)
-- spec: S7.19, S7.20 (shortlist and tournament runs carry their own schema; their metric files
--       say so with a `-- for_schema:` line, query/catalogue.py schema_metrics)
-- grain: one row (none when the run does not exist)
-- input: runs
-- params: run_id
-- output: schema
SELECT json_extract_string(config_json, '$.schema') AS schema FROM runs WHERE run_id = $run_id
