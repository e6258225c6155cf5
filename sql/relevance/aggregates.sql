-- query: aggregates.csv -- one row per model: macros of the seven S8.4 metrics and the F1 spread
-- spec: S8.9 (aggregates.csv; sorted by -f1_macro, model_id), S9.8 (exactly rounded sums, one division)
-- grain: one row per model_id of rel_metrics
-- input: rel_metrics
-- params: none
-- output: model_id, language_count, n_items_total, accuracy_macro, balanced_accuracy_macro, f1_macro,
--         precision_macro, recall_macro, matthews_corrcoef_macro, unparsed_rate_macro, f1_min, f1_max,
--         f1_std (population standard deviation of F1 over the languages)
WITH g AS (
    SELECT model_id, count(*) AS language_count, sum(n) AS n_items_total,
           lc_exact_mean_w(accuracy, 1) AS accuracy_macro,
           lc_exact_mean_w(balanced_accuracy, 1) AS balanced_accuracy_macro,
           lc_exact_mean_w(f1, 1) AS f1_macro,
           lc_exact_mean_w(precision, 1) AS precision_macro,
           lc_exact_mean_w(recall, 1) AS recall_macro,
           lc_exact_mean_w(matthews_corrcoef, 1) AS matthews_corrcoef_macro,
           lc_exact_mean_w(unparsed_rate, 1) AS unparsed_rate_macro,
           min(f1) AS f1_min, max(f1) AS f1_max
    FROM rel_metrics GROUP BY model_id
), spread AS (
    SELECT m.model_id, sqrt(lc_exact_mean_w((m.f1 - g.f1_macro) * (m.f1 - g.f1_macro), 1)) AS f1_std
    FROM rel_metrics m JOIN g USING (model_id) GROUP BY m.model_id
)
SELECT model_id, language_count, n_items_total,
       round(accuracy_macro, 4) AS accuracy_macro, round(balanced_accuracy_macro, 4) AS balanced_accuracy_macro,
       round(f1_macro, 4) AS f1_macro, round(precision_macro, 4) AS precision_macro,
       round(recall_macro, 4) AS recall_macro, round(matthews_corrcoef_macro, 4) AS matthews_corrcoef_macro,
       round(unparsed_rate_macro, 4) AS unparsed_rate_macro,
       round(f1_min, 4) AS f1_min, round(f1_max, 4) AS f1_max, round(f1_std, 4) AS f1_std
FROM g JOIN spread USING (model_id)
ORDER BY -round(f1_macro, 4), model_id
