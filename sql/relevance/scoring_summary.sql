-- query: scoring_summary.csv -- one row per scoring model: best operating points, ROC-AUC, speed, memory
-- spec: S8.9 (scoring_summary.csv; sorted by -best_f1, model_id; throughput macro to 2 decimals), S8.8, S8.5
-- grain: one row per model_id of rel_best
-- input: rel_best, rel_sweep_macro, rel_runs
-- params: none
-- output: model_id, language_count, n_items_total, best_mcc, best_mcc_threshold, best_f1, best_f1_threshold,
--         best_balanced_accuracy, best_balanced_accuracy_threshold, best_precision, best_precision_threshold,
--         best_recall, best_recall_threshold, roc_auc_macro, throughput_items_per_second_macro,
--         peak_vram_bytes_max
WITH facts AS (
    SELECT model_id, round(lc_exact_mean_w(throughput_items_per_second,
                 CASE WHEN throughput_items_per_second IS NULL THEN 0 ELSE 1 END), 2) AS throughput_items_per_second_macro,
           max(peak_vram_bytes) AS peak_vram_bytes_max
    FROM rel_runs WHERE mode = 'scoring' GROUP BY model_id
), head AS (
    SELECT model_id, any_value(language_count) AS language_count, any_value(n_items_total) AS n_items_total,
           any_value(roc_auc_macro) AS roc_auc_macro
    FROM rel_sweep_macro GROUP BY model_id
)
SELECT b.model_id, h.language_count, h.n_items_total,
       b.best_mcc, b.best_mcc_threshold, b.best_f1, b.best_f1_threshold,
       b.best_balanced_accuracy, b.best_balanced_accuracy_threshold, b.best_precision, b.best_precision_threshold,
       b.best_recall, b.best_recall_threshold, h.roc_auc_macro,
       f.throughput_items_per_second_macro, f.peak_vram_bytes_max
FROM rel_best b JOIN head h USING (model_id) LEFT JOIN facts f USING (model_id)
ORDER BY -b.best_f1, b.model_id
