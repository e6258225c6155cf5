-- table: rel_sweep -- the S8.6 threshold sweep of every scoring run
-- spec: S8.6 (19 thresholds; yes iff the saved yes score >= t, a missing yes score reads 0.0, no item is
--       unparsed), S8.4 (metrics and the zero-denominator rule), S9.2 (denominators beside the ratios)
-- grain: one row per (scoring run, grid threshold)
-- input: rel_items
-- params: none
-- output: run_id, model_id, language, threshold, n, tp, fn, tn, fp, precision_n, recall_n, accuracy, precision,
--         recall, f1, balanced_accuracy, matthews_corrcoef
WITH grid(threshold) AS (
    VALUES (CAST('0' AS DOUBLE)), (CAST('1e-5' AS DOUBLE)), (CAST('3e-5' AS DOUBLE)), (CAST('1e-4' AS DOUBLE)),
           (CAST('3e-4' AS DOUBLE)), (CAST('1e-3' AS DOUBLE)), (CAST('3e-3' AS DOUBLE)), (CAST('0.01' AS DOUBLE)),
           (CAST('0.03' AS DOUBLE)), (CAST('0.1' AS DOUBLE)), (CAST('0.2' AS DOUBLE)), (CAST('0.3' AS DOUBLE)),
           (CAST('0.4' AS DOUBLE)), (CAST('0.5' AS DOUBLE)), (CAST('0.6' AS DOUBLE)), (CAST('0.7' AS DOUBLE)),
           (CAST('0.8' AS DOUBLE)), (CAST('0.9' AS DOUBLE)), (CAST('1.0' AS DOUBLE))
), c AS (
    SELECT i.run_id, any_value(i.model_id) AS model_id, any_value(i.language) AS language, g.threshold,
           count(*) AS n,
           count(*) FILTER (WHERE i.gold AND coalesce(i.yes_score, 0.0) >= g.threshold) AS tp,
           count(*) FILTER (WHERE i.gold AND NOT coalesce(i.yes_score, 0.0) >= g.threshold) AS fn,
           count(*) FILTER (WHERE NOT i.gold AND NOT coalesce(i.yes_score, 0.0) >= g.threshold) AS tn,
           count(*) FILTER (WHERE NOT i.gold AND coalesce(i.yes_score, 0.0) >= g.threshold) AS fp
    FROM rel_items i CROSS JOIN grid g
    WHERE i.mode = 'scoring'
    GROUP BY i.run_id, g.threshold
)
SELECT run_id, model_id, language, threshold, n, tp, fn, tn, fp, tp + fp AS precision_n, tp + fn AS recall_n,
       lc_rel_div(tp + tn, n) AS accuracy,
       lc_rel_div(tp, tp + fp) AS precision,
       lc_rel_div(tp, tp + fn) AS recall,
       lc_rel_f1(tp, fp, fn) AS f1,
       lc_rel_balanced(tp, fn, tn, fp) AS balanced_accuracy,
       lc_rel_mcc(tp, fn, tn, fp) AS matthews_corrcoef
FROM c
