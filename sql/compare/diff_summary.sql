-- compare: diff_summary -- how two runs' case sets overlap
-- spec: S9 (case-level diff)
-- grain: one row
-- input: diff_cases
-- params: none
-- output: compared, only_in_a, only_in_b, label_changed, paired_rows (distinct rows with a paired case:
--         the bootstrap's resampling units)
SELECT count(*) FILTER (WHERE in_a AND in_b) AS compared,
       count(*) FILTER (WHERE in_a AND NOT in_b) AS only_in_a,
       count(*) FILTER (WHERE in_b AND NOT in_a) AS only_in_b,
       count(*) FILTER (WHERE label_changed) AS label_changed,
       count(DISTINCT row_index) FILTER (WHERE in_a AND in_b AND paired) AS paired_rows
FROM diff_cases
