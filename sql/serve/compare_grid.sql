-- query: compare_grid -- the case grid of the compare page: one row per case, the runs' answers side by side
-- spec: S9 (case_id joins runs of one dataset); S2.9 (correct is null when unscored); S4.4 (case records)
-- grain: one row per case_id that any run named has, with row_index in [$lo_row, $hi_row) (null: no
--        bound), after the keyset ($after_row, $after_qid), passing $show; at most $limit (null: all)
-- input: cases
-- params: runs, show, lo_row, hi_row, after_row, after_qid, limit (runs: the run ids in the order
--         named, run_index 1..K; show: null for every case;
--         'outcome_differs': some runs right and others wrong; 'prediction_differs': two or more
--         different answers; 'all_wrong': every run scored the case and none got it right)
-- output: case_id, row_index, qid, language_key, model_key, tags, expected_json, run_indexes, row_indexes,
--         predictions, corrects, confidences (lists in run order, over the runs that have the case),
--         n_runs, n_scored, n_correct, n_answers (distinct non-null predictions)
-- why: the window [lo_row, hi_row) lets the page read only the row groups it needs (the parquet
--      statistics on row_index): laya_cases/views/serve/compare.py widens it until a page is full, so a
--      first page costs a few row groups, not an aggregation of every run. The filter and the keyset run
--      on a lean aggregation (counts only); the lists are built for the page's cases alone. A case's
--      position, keys and label are the first run's that has it (as sql/stability/case_runs.sql reads them).
WITH named AS (
    SELECT CAST($runs[i] AS VARCHAR) AS run_id, CAST(i AS INTEGER) AS run_index
    FROM range(1, len($runs) + 1) AS t(i)
),
c AS (
    SELECT c.case_id, c.row_index, c.qid, c.language_key, c.model_key, c.tags, c.expected_json, c.predicted,
           c.correct, c.confidence, n.run_index
    FROM cases c JOIN named n ON c.run_id = n.run_id
    WHERE ($lo_row::BIGINT IS NULL OR c.row_index >= $lo_row::BIGINT)
      AND ($hi_row::BIGINT IS NULL OR c.row_index < $hi_row::BIGINT)
),
lean AS (
    SELECT case_id, first(row_index ORDER BY run_index) AS row_index, first(qid ORDER BY run_index) AS qid,
           count(*) AS n_runs, count(correct) AS n_scored, count(*) FILTER (WHERE correct) AS n_correct,
           count(DISTINCT predicted) AS n_answers
    FROM c GROUP BY case_id
),
chosen AS (
    SELECT * FROM lean
    WHERE ($after_row::BIGINT IS NULL OR row_index > $after_row::BIGINT
           OR (row_index = $after_row::BIGINT AND qid > $after_qid::VARCHAR))
      AND ($show::VARCHAR IS NULL
           OR ($show::VARCHAR = 'outcome_differs' AND n_correct > 0 AND n_correct < n_scored)
           OR ($show::VARCHAR = 'prediction_differs' AND n_answers >= 2)
           OR ($show::VARCHAR = 'all_wrong' AND n_scored = len($runs) AND n_correct = 0))
    ORDER BY row_index, qid
    LIMIT $limit::BIGINT
)
SELECT k.case_id, k.row_index, k.qid,
       first(c.language_key ORDER BY c.run_index) AS language_key, first(c.model_key ORDER BY c.run_index) AS model_key,
       first(c.tags ORDER BY c.run_index) AS tags, first(c.expected_json ORDER BY c.run_index) AS expected_json,
       list(c.run_index ORDER BY c.run_index) AS run_indexes, list(c.row_index ORDER BY c.run_index) AS row_indexes,
       list(c.predicted ORDER BY c.run_index) AS predictions, list(c.correct ORDER BY c.run_index) AS corrects,
       list(c.confidence ORDER BY c.run_index) AS confidences,
       k.n_runs, k.n_scored, k.n_correct, k.n_answers
FROM chosen k JOIN c ON c.case_id = k.case_id
GROUP BY k.case_id, k.row_index, k.qid, k.n_runs, k.n_scored, k.n_correct, k.n_answers
ORDER BY k.row_index, k.qid
