-- table: rel_sweep_macro -- the sweep per (scoring model, threshold): macro over the model's languages
-- spec: S8.6 (the grid), S8.8 (macro = mean over the model's languages, rounded to 4 decimals), S8.7
--       (roc_auc_macro: the mean over the languages that have one), S9.8 (exactly rounded sums)
-- grain: one row per (model_id, threshold)
-- input: rel_sweep, rel_auc
-- params: none
-- output: model_id, threshold, language_count, n_items_total, accuracy_macro, balanced_accuracy_macro, f1_macro,
--         precision_macro, recall_macro, matthews_corrcoef_macro, roc_auc_macro (all rounded to 4 decimals)
WITH auc AS (
    SELECT s.model_id, round(lc_exact_mean_w(a.roc_auc, 1), 4) AS roc_auc_macro
    FROM (SELECT DISTINCT run_id, model_id FROM rel_sweep) s JOIN rel_auc a USING (run_id)
    WHERE a.roc_auc IS NOT NULL GROUP BY s.model_id
)
SELECT s.model_id, s.threshold, count(*) AS language_count, sum(s.n) AS n_items_total,
       round(lc_exact_mean_w(s.accuracy, 1), 4) AS accuracy_macro,
       round(lc_exact_mean_w(s.balanced_accuracy, 1), 4) AS balanced_accuracy_macro,
       round(lc_exact_mean_w(s.f1, 1), 4) AS f1_macro,
       round(lc_exact_mean_w(s.precision, 1), 4) AS precision_macro,
       round(lc_exact_mean_w(s.recall, 1), 4) AS recall_macro,
       round(lc_exact_mean_w(s.matthews_corrcoef, 1), 4) AS matthews_corrcoef_macro,
       any_value(auc.roc_auc_macro) AS roc_auc_macro
FROM rel_sweep s LEFT JOIN auc USING (model_id)
GROUP BY s.model_id, s.threshold
