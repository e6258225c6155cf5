-- query: stability_unstable -- the unstable cases: right in some runs, wrong in others, least agreement first
-- spec: S9 (case-level comparison across runs, a laya-cases extension)
-- grain: one row per unstable case
-- input: stability_cases
-- params: none
-- output: case_id, row_index, line_no, qid, language_key, expected_json, n_scored, n_correct, n_failed,
--         agreement, modal, predictions, corrects, confidences (lists in run order)
-- why: the order (agreement, then the share right nearest one half, then dataset position) puts the
--      cases the runs split on most evenly first.
SELECT case_id, row_index, line_no, qid, language_key, expected_json, n_scored, n_correct, n_failed, agreement,
       modal, predictions, corrects, confidences
FROM stability_cases
WHERE unstable
ORDER BY agreement, abs(p_correct - 0.5), row_index, qid_pos, case_id
