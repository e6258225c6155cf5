-- query: operating_points.csv -- a threshold chosen on runs A, applied to runs B, beside B's in-sample best
-- spec: S8.8 (the best threshold maximises the rounded macro value, ties to the lowest threshold), S8.6 (grid)
-- grain: one row per B run of rel_pick
-- input: rel_sweep, rel_pick (run_id, role 'A' | 'B', pick_group: the A runs whose macro picks a B run's
--        threshold share its pick_group)
-- params: metric (f1 | matthews_corrcoef | balanced_accuracy | precision | recall | accuracy)
-- output: model_id, language, run_id, picked_on, metric, picked_threshold, picked_on_value (A's rounded macro
--         at it), value_at_picked, f1/precision/recall/matthews_corrcoef at the picked threshold,
--         in_sample_threshold, in_sample_value, optimism (in_sample_value - value_at_picked)
WITH v AS (
    SELECT s.*, p.role, p.pick_group,
           CASE $metric WHEN 'f1' THEN s.f1 WHEN 'matthews_corrcoef' THEN s.matthews_corrcoef
                        WHEN 'balanced_accuracy' THEN s.balanced_accuracy WHEN 'precision' THEN s.precision
                        WHEN 'recall' THEN s.recall WHEN 'accuracy' THEN s.accuracy END AS value
    FROM rel_sweep s JOIN rel_pick p USING (run_id)
), a AS (
    SELECT pick_group, threshold, round(lc_exact_mean_w(value, 1), 4) AS macro,
           string_agg(DISTINCT run_id, ' ' ORDER BY run_id) AS picked_on
    FROM v WHERE role = 'A' GROUP BY pick_group, threshold
), chosen AS (
    SELECT pick_group, arg_min(threshold, (-macro, threshold)) AS picked_threshold, max(macro) AS picked_on_value,
           any_value(picked_on) AS picked_on
    FROM a GROUP BY pick_group
), insample AS (
    SELECT run_id, arg_min(threshold, (-round(value, 4), threshold)) AS in_sample_threshold,
           max(round(value, 4)) AS in_sample_value
    FROM v WHERE role = 'B' GROUP BY run_id
)
SELECT b.model_id, b.language, b.run_id, c.picked_on, $metric AS metric, c.picked_threshold, c.picked_on_value,
       round(b.value, 4) AS value_at_picked,
       round(b.f1, 4) AS f1_at_picked, round(b.precision, 4) AS precision_at_picked,
       round(b.recall, 4) AS recall_at_picked, round(b.matthews_corrcoef, 4) AS matthews_corrcoef_at_picked,
       i.in_sample_threshold, i.in_sample_value,
       round(i.in_sample_value - round(b.value, 4), 4) AS optimism
FROM v b JOIN chosen c USING (pick_group) JOIN insample i USING (run_id)
WHERE b.role = 'B' AND b.threshold = c.picked_threshold
ORDER BY b.model_id, b.language, b.run_id
