-- table: stability_cases -- each case across the K runs: how many scored it, got it right, agree on one answer
-- spec: S9 (case-level comparison across runs, a laya-cases extension); S2.9 (correctness)
-- grain: one row per case_id of stability_case_runs
-- input: stability_case_runs
-- params: none
-- output: case_id, row_index, line_no, qid_pos, qid, language_key, model_key, tags, expected_json,
--         n_runs (runs with a record of the case), n_failed, n_scored, n_correct, n_predicted, modal
--         (the commonest prediction; ties: the smallest text), n_modal, agreement (n_modal / n_predicted),
--         p_correct (n_correct / n_scored), compared (scored by 2+ runs), unstable (compared, and right in
--         some runs and wrong in others), predictions, corrects, confidences (lists in run order, null
--         where the run has no answer)
-- why: a failed or absent run neither agrees nor disagrees: it is counted in n_failed, not in the
--      shares; a case is compared only when two runs scored it, so a one-run case is never "stable".
WITH votes AS (
    SELECT case_id, predicted, count(*) AS k FROM stability_case_runs
    WHERE predicted IS NOT NULL GROUP BY case_id, predicted
),
top AS (
    SELECT DISTINCT ON (case_id) case_id, predicted AS modal, k AS n_modal FROM votes ORDER BY case_id, k DESC, predicted
),
counted AS (
    SELECT case_id, any_value(row_index) AS row_index, any_value(line_no) AS line_no, any_value(qid_pos) AS qid_pos,
           any_value(qid) AS qid, any_value(language_key) AS language_key, any_value(model_key) AS model_key,
           any_value(tags) AS tags, any_value(expected_json) AS expected_json,
           count(*) FILTER (WHERE status IN ('scored', 'unscored', 'failed')) AS n_runs,
           count(*) FILTER (WHERE status = 'failed') AS n_failed,
           count(*) FILTER (WHERE status = 'scored') AS n_scored,
           count(*) FILTER (WHERE correct) AS n_correct,
           count(predicted) AS n_predicted,
           list(predicted ORDER BY run_index) AS predictions,
           list(correct ORDER BY run_index) AS corrects,
           list(confidence ORDER BY run_index) AS confidences
    FROM stability_case_runs
    GROUP BY case_id
)
SELECT c.case_id, c.row_index, c.line_no, c.qid_pos, c.qid, c.language_key, c.model_key, c.tags, c.expected_json,
       c.n_runs, c.n_failed, c.n_scored, c.n_correct, c.n_predicted, t.modal, coalesce(t.n_modal, 0) AS n_modal,
       CASE WHEN c.n_predicted > 0 THEN t.n_modal / c.n_predicted END AS agreement,
       CASE WHEN c.n_scored > 0 THEN c.n_correct / c.n_scored END AS p_correct,
       c.n_scored >= 2 AS compared,
       c.n_scored >= 2 AND c.n_correct > 0 AND c.n_correct < c.n_scored AS unstable,
       c.predictions, c.corrects, c.confidences
FROM counted c LEFT JOIN top t USING (case_id)
