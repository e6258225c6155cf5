-- table: boot_values -- each bootstrap replicate's accuracy delta (B - A), per group, for bootstrap/intervals.sql
-- spec: S9.5 (resampling unit: the dataset row, all its cases move together; the index stream is
--       random.Random(seed).randrange(n) replicate by replicate, counted per class of rows as
--       boot_class_counts; a replicate where the group has no paired case is skipped, so it has no
--       row here)
-- grain: one row per (group, replicate) with at least one paired case in the resample
-- input: diff_class_units, boot_class_counts (replicate, class, m): rows of that class
--        (diff_unit_classes) were drawn m > 0 times in all in that replicate; one batch of replicates at
--        a time (laya_cases/report/diff.py appends the batches' rows)
-- params: none
-- output: dim ('<dim>@<replicate>', the form bootstrap/intervals.sql reads), key, metric ('delta'), value
-- why: the delta of a replicate is (hits_b - hits_a) / n over the resampled paired cases, the same
--      one-rounding form as diff_slices.sql's point estimate.
WITH replicates AS (
    SELECT p.dim, p.key, d.replicate,
           sum(d.m * p.n) AS n, sum(d.m * p.hits_a) AS hits_a, sum(d.m * p.hits_b) AS hits_b
    FROM boot_class_counts d JOIN diff_class_units p ON p.class = d.class
    GROUP BY p.dim, p.key, d.replicate
)
SELECT dim || '@' || CAST(replicate AS VARCHAR) AS dim, key, 'delta' AS metric,
       CAST(hits_b - hits_a AS DOUBLE) / n AS value
FROM replicates
WHERE n > 0
