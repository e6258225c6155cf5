-- query: relabelled_slice_sets -- the slice sets with those relabelled cases moved to added
-- spec: S4.1 (slice keys), S2.9 (correctness)
-- grain: one row per (run, slice_set): the committed ones, then one per new slice set of relabel_changes
-- input: slice_sets_as_committed, relabel_changes
-- params: none
-- output: the slice_sets columns
-- why: a new slice set is its case's old one with `correct` replaced, so every slice key stays as committed.
SELECT * FROM slice_sets_as_committed
UNION ALL BY NAME
SELECT DISTINCT s.* REPLACE (r.correct AS correct, r.slice_set AS slice_set)
FROM relabel_changes r
JOIN slice_sets_as_committed s ON s.run_id = r.run_id AND s.slice_set = r.old_slice_set
WHERE r.slice_set <> r.old_slice_set
