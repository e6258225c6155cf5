-- query: board -- each model's macro F1 over the leaderboard's languages (the point estimates it ranks)
-- spec: S8.8 (macro = mean over the model's languages), S8.4 (F1), S9.8 (exactly rounded sum, one division)
-- grain: one row per model_id, by model_id
-- input: rel_metrics, rel_items (restricted to the languages every model has)
-- params: none
-- output: model_id, language_count, n_items_total, f1_macro
SELECT model_id, count(*) AS language_count, sum(n) AS n_items_total, lc_exact_mean_w(f1, 1) AS f1_macro
FROM rel_metrics
WHERE language IN (SELECT DISTINCT language FROM rel_items)
GROUP BY model_id
ORDER BY model_id
