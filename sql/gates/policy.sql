-- gate: policy -- the gate-policy rules that fail, in rule order
-- spec: S6.6 step 3 (a missing measurement never passes), S6.5
-- grain: one row per failing rule; no rows means every rule passed
-- input: policy_measures
-- params: none
-- output: pos, dim, key, metric, limit_name, bound, min_count, significant_at, current, n, base_value, base_n,
--         drift, right_to_wrong, wrong_to_right, p_value, unpaired, failure, severity
SELECT *, 'error' AS severity
FROM policy_measures
WHERE failure IS NOT NULL
ORDER BY pos
