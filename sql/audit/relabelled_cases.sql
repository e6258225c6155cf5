-- query: relabelled_cases -- the cases with the store's accepted relabels applied: label and correctness
-- spec: S2.9 (correctness dispatches on the answer's own type: a choice is right when its choice equals a
--       string label, a noul when its verdict equals a boolean label); S5.2 (runs of one labelled dataset)
-- grain: one row per case of cases_as_committed (the store's cases view, renamed by the caller)
-- input: cases_as_committed, runs, relabels (the relabels file's rows, registered by the caller)
-- params: none
-- output: the cases columns, with expected_json, expected_kind and correct replaced where a relabel of the
--         case's dataset (labelled_rows_sha256) and case_id exists: the latest (highest seq) counts
-- why: a relabel never edits a committed run; a reader that asks for relabels reads this view as `cases`.
--      A relabel is accepted only for choice (string) and noul (boolean) labels, so score_mae is unchanged.
WITH latest AS (
    SELECT DISTINCT ON (labelled_rows_sha256, case_id) labelled_rows_sha256, case_id, to_json
    FROM relabels
    ORDER BY labelled_rows_sha256, case_id, seq DESC
),
fixed AS (
    SELECT c.case_id, c.run_id, l.to_json
    FROM cases_as_committed c
    JOIN runs r ON r.run_id = c.run_id
    JOIN latest l ON l.labelled_rows_sha256 = r.labelled_rows_sha256 AND l.case_id = c.case_id
)
SELECT c.* REPLACE (
    coalesce(f.to_json, c.expected_json) AS expected_json,
    CASE WHEN f.to_json IS NULL THEN c.expected_kind
         WHEN json_type(f.to_json) = 'VARCHAR' THEN 'string'
         WHEN json_type(f.to_json) = 'BOOLEAN' THEN 'bool' ELSE c.expected_kind END AS expected_kind,
    CASE WHEN f.to_json IS NULL THEN c.correct
         WHEN c.answer_type = 'choice' AND json_type(f.to_json) = 'VARCHAR'
             THEN coalesce(json_type(c.answer_json, '$.choice') = 'VARCHAR'
                           AND (c.answer_json ->> '$.choice') = (f.to_json ->> '$'), false)
         WHEN c.answer_type = 'noul' AND json_type(f.to_json) = 'BOOLEAN' THEN c.predicted = f.to_json
         END AS correct)
FROM cases_as_committed c
LEFT JOIN fixed f ON f.case_id = c.case_id AND f.run_id = c.run_id
