-- table: diff_unit_classes -- each paired dataset row's class: rows that add the same counts to every group share one
-- spec: S9.5 (resampling unit: the dataset row)
-- grain: one row per unit (paired dataset row)
-- input: diff_units
-- params: none
-- output: unit, class (0, 1, ...: the classes numbered in the order of their profiles)
-- why: a replicate's sums add each drawn row's counts (n, hits_a, hits_b per group) times how often it was
--      drawn; rows with the same counts in every group are interchangeable there, so the index stream is
--      counted per class (laya_cases/query/resample.py class_counts) and a replicate joins a few classes
--      instead of every row it drew: the same integer sums. A run of one question per row has at most
--      4 classes per group.
WITH entries AS (             -- each distinct (group, counts) numbered: a row's profile is a list of integers
    SELECT dim, key, n, hits_a, hits_b,
           CAST(row_number() OVER (ORDER BY dim, key, n, hits_a, hits_b) AS BIGINT) AS entry
    FROM (SELECT DISTINCT dim, key, n, hits_a, hits_b FROM diff_units)
)
SELECT unit, CAST(dense_rank() OVER (ORDER BY profile) - 1 AS BIGINT) AS class
FROM (SELECT u.unit, list(e.entry ORDER BY e.entry) AS profile
      FROM diff_units u JOIN entries e USING (dim, key, n, hits_a, hits_b)
      GROUP BY u.unit)
