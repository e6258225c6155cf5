-- query: relabelled_cases -- the cases with the store's accepted relabels applied: label, correctness, slice set
-- spec: S2.9 (correctness), S5.2 (runs of one labelled dataset)
-- grain: one row per case of cases_as_committed (the store's cases view, renamed by the caller)
-- input: cases_as_committed, relabel_changes
-- params: none
-- output: the cases columns, with expected_json, expected_kind, correct and slice_set replaced where a
--         relabel applies (sql/audit/relabel_changes.sql)
-- why: a relabel never edits a committed run; a reader that asks for relabels reads this view as `cases`.
SELECT c.* REPLACE (
    coalesce(r.to_json, c.expected_json) AS expected_json,
    coalesce(r.expected_kind, c.expected_kind) AS expected_kind,
    CASE WHEN r.case_id IS NULL THEN c.correct ELSE r.correct END AS correct,
    coalesce(r.slice_set, c.slice_set) AS slice_set)
FROM cases_as_committed c
LEFT JOIN relabel_changes r ON r.case_id = c.case_id AND r.run_id = c.run_id
