-- query: leaderboard.csv -- one row per (model, language) run: S8.4 metrics, run facts, intervals, McNemar
-- spec: S8.9 (leaderboard.csv; metric cells rounded to 4 decimals; Wilson for accuracy/precision/recall,
--       bootstrap for F1 and MCC; McNemar against the best-F1 run of the language; sorted by -rounded f1,
--       model_id, language), S9.2 (the denominators are columns too), S8.10 (recorded facts)
-- grain: one row per run of rel_metrics
-- input: rel_metrics, rel_runs, rel_intervals (run_id, metric, lower, upper), rel_mcnemar
-- params: none
-- output: the leaderboard.csv columns (docs/relevance.md)
SELECT m.model_id, m.language, m.n AS n_items,
       round(m.accuracy, 4) AS accuracy, round(m.balanced_accuracy, 4) AS balanced_accuracy,
       round(m.f1, 4) AS f1, round(m.precision, 4) AS precision, round(m.recall, 4) AS recall,
       round(m.matthews_corrcoef, 4) AS matthews_corrcoef, round(m.unparsed_rate, 4) AS unparsed_rate,
       m.truncated,
       round(r.duration_seconds, 4) AS duration_seconds,
       round(lc_rel_div(coalesce(r.items, m.n), r.duration_seconds), 4) AS items_per_second,   -- one clock
       r.runtime, r.generation_mode, r.package_version,
       round(r.throughput_items_per_second, 4) AS throughput_items_per_second, r.peak_vram_bytes,
       r.model_revision,
       round(lc_rel_wilson_low(m.accuracy_hits, m.n), 4) AS accuracy_ci_low,
       round(lc_rel_wilson_high(m.accuracy_hits, m.n), 4) AS accuracy_ci_high,
       round(lc_rel_wilson_low(m.tp, m.precision_n), 4) AS precision_ci_low,
       round(lc_rel_wilson_high(m.tp, m.precision_n), 4) AS precision_ci_high,
       round(lc_rel_wilson_low(m.tp, m.recall_n), 4) AS recall_ci_low,
       round(lc_rel_wilson_high(m.tp, m.recall_n), 4) AS recall_ci_high,
       round(f.lower, 4) AS f1_ci_low, round(f.upper, 4) AS f1_ci_high,
       round(k.lower, 4) AS matthews_corrcoef_ci_low, round(k.upper, 4) AS matthews_corrcoef_ci_high,
       round(mc.mcnemar_p, 4) AS mcnemar_p_vs_best_f1, mc.best_run_id AS best_f1_run_id,
       mc.b AS mcnemar_b, mc.c AS mcnemar_c,
       m.tp, m.fn, m.tn, m.fp, m.unparsed, m.accuracy_hits, m.precision_n, m.recall_n, m.specificity_n,
       m.run_id, r.benchmark_sha256, r.prompt_sha256
FROM rel_metrics m
JOIN rel_runs r USING (run_id)
LEFT JOIN rel_intervals f ON f.run_id = m.run_id AND f.metric = 'f1'
LEFT JOIN rel_intervals k ON k.run_id = m.run_id AND k.metric = 'matthews_corrcoef'
LEFT JOIN rel_mcnemar mc ON mc.run_id = m.run_id
ORDER BY -round(m.f1, 4), m.model_id, m.language, m.run_id
