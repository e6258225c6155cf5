-- query: groups -- every (dim, key) group that exists, even when no metric applies to it
-- spec: S4.2 (a dimension appears when it has a group; a group can be the empty object, T3.3)
-- grain: one row per (dim, key)
-- input: slice_sums
-- params: none
-- output: dim, key, n_cases
SELECT dim, key, sum(n) AS n_cases FROM slice_sums GROUP BY dim, key
