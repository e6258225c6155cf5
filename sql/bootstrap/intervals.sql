-- query: intervals -- percentile bootstrap intervals from the replicate values
-- spec: S9.5 (replicates where the metric is absent are skipped; B_used published; fewer than 2
--       usable replicates -> no interval; linear interpolation at position (B_used - 1) * p of the
--       sorted values, the S8.9 rule, in numpy's form: from the upper neighbour when t >= 0.5)
-- grain: one row per (dim, key, metric) with at least 2 usable replicates
-- input: boot_values (dim, key, metric, value), dim still carrying '@<replicate>'
-- params: lower, upper (the two quantile levels, e.g. 0.025 and 0.975)
-- output: dim, key, metric, B_used, lower, upper
WITH v AS (
    SELECT split_part(dim, '@', 1) AS dim, key, metric, value
    FROM boot_values
    WHERE value IS NOT NULL AND NOT isnan(value)
), ranked AS (
    SELECT dim, key, metric, value,
           row_number() OVER (PARTITION BY dim, key, metric ORDER BY value) - 1 AS i,
           count(*) OVER (PARTITION BY dim, key, metric) AS b
    FROM v
), positions AS (
    SELECT dim, key, metric, any_value(b) AS b,
           (any_value(b) - 1) * $lower AS pl, (any_value(b) - 1) * $upper AS pu
    FROM ranked GROUP BY dim, key, metric
), picked AS (
    SELECT r.dim, r.key, r.metric, a.b, a.pl, a.pu,
           max(CASE WHEN r.i = floor(a.pl) THEN r.value END) AS l0,
           max(CASE WHEN r.i = least(floor(a.pl) + 1, a.b - 1) THEN r.value END) AS l1,
           max(CASE WHEN r.i = floor(a.pu) THEN r.value END) AS u0,
           max(CASE WHEN r.i = least(floor(a.pu) + 1, a.b - 1) THEN r.value END) AS u1
    FROM ranked r JOIN positions a USING (dim, key, metric)
    GROUP BY ALL
)
SELECT dim, key, metric, b AS B_used,
       CASE WHEN pl - floor(pl) >= 0.5 THEN l1 - (l1 - l0) * (1.0 - (pl - floor(pl)))
            ELSE l0 + (l1 - l0) * (pl - floor(pl)) END AS lower,
       CASE WHEN pu - floor(pu) >= 0.5 THEN u1 - (u1 - u0) * (1.0 - (pu - floor(pu)))
            ELSE u0 + (u1 - u0) * (pu - floor(pu)) END AS upper
FROM picked
WHERE b >= 2
