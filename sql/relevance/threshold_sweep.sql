-- query: threshold_sweep.csv -- one row per (scoring model, grid threshold)
-- spec: S8.9 (threshold_sweep.csv), S8.6 (grid), S8.8 (macros rounded to 4 decimals)
-- grain: one row per (model_id, threshold), by model_id then threshold
-- input: rel_sweep_macro
-- params: none
-- output: model_id, threshold, language_count, n_items_total, accuracy_macro, balanced_accuracy_macro, f1_macro,
--         precision_macro, recall_macro, matthews_corrcoef_macro, roc_auc_macro
SELECT model_id, threshold, language_count, n_items_total, accuracy_macro, balanced_accuracy_macro, f1_macro,
       precision_macro, recall_macro, matthews_corrcoef_macro, roc_auc_macro
FROM rel_sweep_macro
ORDER BY model_id, threshold
