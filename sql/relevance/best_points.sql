-- table: rel_best -- the best operating point of each scoring model for five metrics
-- spec: S8.8 (the best row maximises the rounded macro value; ties go to the lowest threshold)
-- grain: one row per model_id of rel_sweep_macro
-- input: rel_sweep_macro
-- params: none
-- output: model_id, best_<m> and best_<m>_threshold for m in mcc, f1, balanced_accuracy, precision, recall
SELECT model_id,
       max(matthews_corrcoef_macro) AS best_mcc,
       arg_min(threshold, (-matthews_corrcoef_macro, threshold)) AS best_mcc_threshold,
       max(f1_macro) AS best_f1, arg_min(threshold, (-f1_macro, threshold)) AS best_f1_threshold,
       max(balanced_accuracy_macro) AS best_balanced_accuracy,
       arg_min(threshold, (-balanced_accuracy_macro, threshold)) AS best_balanced_accuracy_threshold,
       max(precision_macro) AS best_precision,
       arg_min(threshold, (-precision_macro, threshold)) AS best_precision_threshold,
       max(recall_macro) AS best_recall, arg_min(threshold, (-recall_macro, threshold)) AS best_recall_threshold
FROM rel_sweep_macro GROUP BY model_id
