-- query: diff_evidence -- per diff group: adjusted McNemar p-values and whether its interval is too wide to decide
-- spec: S9 (case-level diff), S9.5 (paired bootstrap interval), S8.9 (McNemar); laya-cases extension
-- grain: one row per (dim, key) group of diff_slices
-- input: diff_slices, adjusted_p (family = dim, member = key), diff_intervals (bootstrap/intervals.sql)
-- params: margin (a change the user cares about, or null: no evidence verdict)
-- output: dim, key, m, holm_p, bh_p, insufficient_evidence
-- why: the overall row is one test, so it has no adjusted p-value; m is the number of groups of its
--      dimension with a discordant pair (the family the adjustment counts).
SELECT s.dim, s.key, a.m, a.holm_p, a.bh_p,
       lc_insufficient_evidence(i.lower, i.upper, CAST($margin AS DOUBLE)) AS insufficient_evidence
FROM diff_slices s
LEFT JOIN adjusted_p a ON a.family = s.dim AND a.member = s.key
LEFT JOIN diff_intervals i ON i.dim = s.dim AND i.key = s.key
ORDER BY s.dim = 'overall' DESC, s.dim, s.key
