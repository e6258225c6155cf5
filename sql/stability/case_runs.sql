-- table: stability_case_runs -- K runs of one dataset, case by case: one row per (case, run)
-- spec: S9 (case-level comparison across runs, a laya-cases extension: case_id joins runs of one dataset);
--       S2.9 (correct is null when unscored); S6.10 (a failed call is a row-level error record, qid null)
-- grain: one row per (case_id, run named) for every case_id that any of the runs has as a case
-- input: cases, errors
-- params: runs (the run ids, in the order named: run_index 1..K)
-- output: case_id, run_index, run_id, row_index, line_no, qid_pos, qid, language_key, model_key, tags,
--         expected_json, status ('scored'|'unscored'|'failed'|'absent'), predicted, correct, confidence
-- why: a case's position, slice keys and label are read from the first run named that has it (the
--      runs are checked to share their labelled rows); a run without the case is 'failed' when it has an
--      error record for the case's row (the call failed, or the answer was missing), else 'absent'.
WITH named AS (
    SELECT CAST($runs[i] AS VARCHAR) AS run_id, CAST(i AS INTEGER) AS run_index
    FROM range(1, len($runs) + 1) AS t(i)
),
seen AS (
    SELECT c.*, n.run_index FROM cases c JOIN named n ON c.run_id = n.run_id
),
keys AS (
    SELECT DISTINCT ON (case_id) case_id, row_index, line_no, qid_pos, qid, language_key, model_key,
           list_distinct(tags) AS tags, expected_json
    FROM seen
    ORDER BY case_id, run_index
),
failed AS (
    SELECT DISTINCT e.run_id, e.row_index, e.qid FROM errors e JOIN named n ON e.run_id = n.run_id
)
SELECT k.case_id, n.run_index, n.run_id, k.row_index, k.line_no, k.qid_pos, k.qid, k.language_key,
       k.model_key, k.tags, k.expected_json,
       CASE WHEN c.case_id IS NOT NULL AND c.correct IS NOT NULL THEN 'scored'
            WHEN c.case_id IS NOT NULL THEN 'unscored'
            WHEN EXISTS (SELECT 1 FROM failed f WHERE f.run_id = n.run_id AND f.row_index = k.row_index
                         AND (f.qid IS NULL OR f.qid = k.qid)) THEN 'failed'
            ELSE 'absent' END AS status,
       c.predicted, c.correct, c.confidence
FROM keys k CROSS JOIN named n
LEFT JOIN seen c ON c.case_id = k.case_id AND c.run_id = n.run_id
