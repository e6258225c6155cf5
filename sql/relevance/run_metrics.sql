-- table: rel_metrics -- the S8.4 metrics of each (model, language) run, with every denominator beside them
-- spec: S8.4 (unparsed items count as errors in accuracy and enter unparsed_rate only; a zero denominator
--       yields 0.0), S9.2 (the denominators tp + fp, tp + fn, tn + fp and n are published)
-- grain: one row per run of rel_items
-- input: rel_items
-- params: none
-- output: run_id, model_id, language, mode, n, tp, fn, tn, fp, unparsed, truncated, accuracy_hits,
--         precision_n, recall_n, specificity_n, accuracy, precision, recall, f1, balanced_accuracy,
--         matthews_corrcoef, unparsed_rate
WITH c AS (
    SELECT run_id, any_value(model_id) AS model_id, any_value(language) AS language, any_value(mode) AS mode,
           count(*) AS n,
           count(*) FILTER (WHERE gold AND verdict) AS tp,
           count(*) FILTER (WHERE gold AND NOT verdict) AS fn,
           count(*) FILTER (WHERE NOT gold AND NOT verdict) AS tn,
           count(*) FILTER (WHERE NOT gold AND verdict) AS fp,
           count(*) FILTER (WHERE verdict IS NULL) AS unparsed,
           count(*) FILTER (WHERE truncated) AS truncated
    FROM rel_items GROUP BY run_id
)
SELECT run_id, model_id, language, mode, n, tp, fn, tn, fp, unparsed, truncated,
       tp + tn AS accuracy_hits, tp + fp AS precision_n, tp + fn AS recall_n, tn + fp AS specificity_n,
       lc_rel_div(tp + tn, n) AS accuracy,
       lc_rel_div(tp, tp + fp) AS precision,
       lc_rel_div(tp, tp + fn) AS recall,
       lc_rel_f1(tp, fp, fn) AS f1,
       lc_rel_balanced(tp, fn, tn, fp) AS balanced_accuracy,
       lc_rel_mcc(tp, fn, tn, fp) AS matthews_corrcoef,
       lc_rel_div(unparsed, n) AS unparsed_rate
FROM c
