-- table: relabel_changes -- each case a relabel applies to: its new label, correctness and slice set
-- spec: S2.9 (correctness dispatches on the answer's own type: a choice is right when its choice equals a
--       string label, a noul when its verdict equals a boolean label); S5.2 (runs of one labelled dataset)
-- grain: one row per (run, case) with a relabel of the run's dataset (labelled_rows_sha256) and case_id
-- input: cases_as_committed, slice_sets_as_committed, runs, relabels (the store's cases and slice_sets
--        views, renamed by the caller; relabels: the relabels file's rows, registered by the caller)
-- params: none
-- output: run_id, case_id, to_json, expected_kind, correct, slice_set, old_slice_set
-- why: the latest relabel (highest seq) counts. A relabel is accepted only for choice (string) and noul
--      (boolean) labels, so score_mae is unchanged. slice_set encodes correctness (docs/schema.md), so a
--      case whose correctness changes moves to a new slice set: its old one with `correct` replaced,
--      numbered after the run's highest (two ids may then name one combination; every metric sums over them).
WITH latest AS (
    SELECT DISTINCT ON (labelled_rows_sha256, case_id) labelled_rows_sha256, case_id, to_json
    FROM relabels
    ORDER BY labelled_rows_sha256, case_id, seq DESC
),
fixed AS (
    SELECT c.run_id, c.case_id, l.to_json, c.slice_set AS old_slice_set, c.correct AS old_correct,
           CASE WHEN json_type(l.to_json) = 'VARCHAR' THEN 'string'
                WHEN json_type(l.to_json) = 'BOOLEAN' THEN 'bool' ELSE c.expected_kind END AS expected_kind,
           CASE WHEN c.answer_type = 'choice' AND json_type(l.to_json) = 'VARCHAR'
                    THEN coalesce(json_type(c.answer_json, '$.choice') = 'VARCHAR'
                                  AND (c.answer_json ->> '$.choice') = (l.to_json ->> '$'), false)
                WHEN c.answer_type = 'noul' AND json_type(l.to_json) = 'BOOLEAN' THEN c.predicted = l.to_json
                END AS correct
    FROM cases_as_committed c
    JOIN runs r ON r.run_id = c.run_id
    JOIN latest l ON l.labelled_rows_sha256 = r.labelled_rows_sha256 AND l.case_id = c.case_id
),
top AS (
    SELECT run_id, max(slice_set) AS top FROM slice_sets_as_committed GROUP BY run_id
)
SELECT f.run_id, f.case_id, f.to_json, f.expected_kind, f.correct, f.old_slice_set,
       CASE WHEN f.correct IS NOT DISTINCT FROM f.old_correct THEN f.old_slice_set
            ELSE coalesce(t.top, 0) + dense_rank() OVER (
                PARTITION BY f.run_id, f.correct IS NOT DISTINCT FROM f.old_correct
                ORDER BY f.old_slice_set, f.correct) END AS slice_set
FROM fixed f LEFT JOIN top t USING (run_id)
