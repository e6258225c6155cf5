-- gate: flip_rate -- a case-level diff whose overall flip rate is above --max-flip-rate
-- spec: S9 (case-level diff); flip rate = (right->wrong + wrong->right) / paired cases; a diff with
--       no paired case has no flip rate and fails (a missing measurement never passes, S6.6)
-- grain: at most one row (the overall group)
-- input: diff_slices
-- params: max_flip_rate
-- output: dim, key, metric, value, bound, paired, flips, failure ('missing'|'above'), severity
SELECT 'overall' AS dim, '' AS key, 'flip_rate' AS metric, s.flip_rate AS value, $max_flip_rate AS bound,
       coalesce(s.paired, 0) AS paired, coalesce(s.right_to_wrong + s.wrong_to_right, 0) AS flips,
       CASE WHEN s.flip_rate IS NULL THEN 'missing' ELSE 'above' END AS failure,
       'error' AS severity
FROM (SELECT 1) AS one(x)
LEFT JOIN diff_slices s ON s.dim = 'overall'
WHERE s.flip_rate IS NULL OR s.flip_rate > $max_flip_rate
