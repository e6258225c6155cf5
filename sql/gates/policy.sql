-- gate: policy -- the gate-policy rules that fail, in rule order
-- spec: S6.6 step 3 (a missing measurement never passes), S6.5
-- grain: one row per failing rule; no rows means every rule passed
-- input: policy_verdicts
-- params: none
-- output: pos, dim, key, metric, limit_name, bound, min_count, significant_at, current, n, base_value, base_n,
--         drift, right_to_wrong, wrong_to_right, p_value, unpaired, adjust, on_insufficient, holm_p, bh_p,
--         adjusted_p, ci_lower, ci_upper, B_used, insufficient_evidence, verdict, failure, severity
SELECT *, 'error' AS severity
FROM policy_verdicts
WHERE failure IS NOT NULL
ORDER BY pos
