-- compare: diff_summary -- how two runs' case sets overlap
-- spec: S9 (case-level diff)
-- grain: one row
-- input: diff_cases
-- params: none
-- output: compared, only_in_a, only_in_b, label_changed
SELECT count(*) FILTER (WHERE in_a AND in_b) AS compared,
       count(*) FILTER (WHERE in_a AND NOT in_b) AS only_in_a,
       count(*) FILTER (WHERE in_b AND NOT in_a) AS only_in_b,
       count(*) FILTER (WHERE label_changed) AS label_changed
FROM diff_cases
