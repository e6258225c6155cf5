-- compare: diff_bootstrap -- paired bootstrap percentile interval of each group's accuracy delta (B - A)
-- spec: S9.5 (resampling unit: the dataset row, all its cases move together; index stream
--       random.Random(seed).randrange(n) replicate by replicate, supplied as boot_draws; percentile
--       interval by linear interpolation at (B_used - 1) * p; replicates where the group has no
--       paired case are skipped; fewer than 2 usable replicates -> no interval)
-- grain: one row per (dim, key) group with at least one usable replicate
-- input: diff_slice_cases, boot_draws (replicate, row): row r of the stream is the r-th distinct
--        row_index, in ascending order, among the paired cases
-- params: lower, upper (quantile levels, e.g. 0.025 and 0.975)
-- output: dim, key, B_used, ci_low, ci_high
WITH units AS (
    SELECT row_index, CAST(row_number() OVER (ORDER BY row_index) - 1 AS BIGINT) AS unit
    FROM (SELECT DISTINCT row_index FROM diff_slice_cases WHERE dim = 'overall' AND paired)
),
per_unit AS (
    SELECT s.dim, s.key, u.unit,
           count(*) AS n,
           count(*) FILTER (WHERE s.correct_a) AS hits_a,
           count(*) FILTER (WHERE s.correct_b) AS hits_b
    FROM diff_slice_cases s JOIN units u ON u.row_index = s.row_index
    WHERE s.paired
    GROUP BY s.dim, s.key, u.unit
),
multiplicity AS (
    SELECT replicate, CAST(row AS BIGINT) AS unit, count(*) AS m FROM boot_draws GROUP BY replicate, row
),
replicates AS (
    SELECT p.dim, p.key, d.replicate,
           sum(d.m * p.n) AS n, sum(d.m * p.hits_a) AS hits_a, sum(d.m * p.hits_b) AS hits_b
    FROM multiplicity d JOIN per_unit p ON p.unit = d.unit
    GROUP BY p.dim, p.key, d.replicate
)
SELECT dim, key, count(*) AS B_used,
       CASE WHEN count(*) >= 2 THEN quantile_cont(CAST(hits_b - hits_a AS DOUBLE) / n, $lower) END AS ci_low,
       CASE WHEN count(*) >= 2 THEN quantile_cont(CAST(hits_b - hits_a AS DOUBLE) / n, $upper) END AS ci_high
FROM replicates
WHERE n > 0
GROUP BY dim, key
