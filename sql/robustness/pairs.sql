-- table: robustness_pairs -- every variant case of a robustness run beside its baseline case: the S7.15 pair metrics
-- spec: S7.15 (semantic agreement: the first argmax of p equals that of q; drift_i = |p_i - q_i|;
--       mean and max drift; JS = sum over both distributions of 1/2 x ln(x/m) for x > 0, m = (p + q)/2,
--       floored at 0; confidence_drift = max(q) - max(p), signed), S7.14 (both vectors canonical)
-- grain: one row per variant case (option_order, label_rename) whose baseline case (parent_case_id) is a
--        case of the same run with as many probabilities
-- input: cases (view over the warehouse)
-- params: run_id, failed (language keys of languages that failed: their pairs are left out, S7.16)
-- output: language_key, variant, case_id, parent_case_id, row_index, n_options, baseline_pred, variant_pred,
--         agree, mean_drift, max_drift, js, baseline_confidence, variant_confidence, confidence_drift
-- why: the per-option sums are exactly rounded (lc_exact_sum: math.fsum) over the unnested options, so a
--      pair's numbers do not depend on the order of a list fold; JS sums its 2n terms in one fsum
--      (terms for x = 0 are 0.0).
WITH pairs AS (
    SELECT v.language_key, v.variant, v.case_id, v.parent_case_id, v.row_index,
           b.probabilities AS p, v.probabilities AS q
    FROM cases v
    JOIN cases b ON b.run_id = v.run_id AND b.case_id = v.parent_case_id AND b.variant = 'baseline'
    WHERE v.run_id = $run_id AND v.variant IN ('option_order', 'label_rename')
      AND NOT list_contains($failed::VARCHAR[], coalesce(v.language_key, ''))
      AND len(b.probabilities) = len(v.probabilities) AND len(b.probabilities) > 0
), options AS (
    SELECT case_id, p[i] AS p_i, q[i] AS q_i, (p[i] + q[i]) / 2.0 AS m_i
    FROM (SELECT case_id, p, q, unnest(range(1, len(p) + 1)) AS i FROM pairs)
), terms AS (
    SELECT case_id, unnest([CASE WHEN p_i > 0.0 THEN 0.5 * p_i * ln(p_i / m_i) ELSE 0.0 END,
                            CASE WHEN q_i > 0.0 THEN 0.5 * q_i * ln(q_i / m_i) ELSE 0.0 END]) AS t
    FROM options
), divergence AS (
    SELECT case_id, greatest(0.0, lc_exact_sum(t)) AS js FROM terms GROUP BY case_id
), per_pair AS (
    SELECT o.case_id,
           lc_exact_mean_w(abs(o.p_i - o.q_i), 1) AS mean_drift,
           max(abs(o.p_i - o.q_i)) AS max_drift,
           any_value(j.js) AS js
    FROM options o JOIN divergence j ON j.case_id = o.case_id
    GROUP BY o.case_id
)
SELECT x.language_key, x.variant, x.case_id, x.parent_case_id, x.row_index, len(x.p) AS n_options,
       list_position(x.p, list_max(x.p)) - 1 AS baseline_pred,
       list_position(x.q, list_max(x.q)) - 1 AS variant_pred,
       list_position(x.p, list_max(x.p)) = list_position(x.q, list_max(x.q)) AS agree,
       d.mean_drift, d.max_drift,
       d.js,
       list_max(x.p) AS baseline_confidence, list_max(x.q) AS variant_confidence,
       list_max(x.q) - list_max(x.p) AS confidence_drift
FROM pairs x JOIN per_pair d ON d.case_id = x.case_id
ORDER BY x.row_index, x.variant
