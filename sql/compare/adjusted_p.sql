-- table: adjusted_p -- Holm and Benjamini-Hochberg adjusted p-values within each family of tests
-- spec: S9 (case-level diff; laya-cases extension: many slices, one test each), S8.9 (the exact
--       McNemar p-values being adjusted)
-- grain: one row per p_family row
-- input: p_family (family, member, p): one test per member; p is null where the member has no test
--        (a slice with no discordant pair: its McNemar p is 1 whatever happens, so it can never
--        reject and is left out of m, as R's p.adjust leaves out NA)
-- params: none
-- output: family, member, p, m, holm_p, bh_p (null where p is null)
-- why: with p ascending (ties broken by member, which does not change the values) and i its rank
--      among the m tested members, Holm's step-down is the running max of (m - i + 1) * p from
--      the smallest p, capped at 1 (so adjusted values never decrease with p); Benjamini-Hochberg's
--      step-up is the running min of m / i * p from the largest p, capped at 1. These equal
--      statsmodels' multipletests(method='holm' / 'fdr_bh').
WITH tested AS (
    SELECT family, member, p,
           row_number() OVER (PARTITION BY family ORDER BY p, member) AS i,
           count(*) OVER (PARTITION BY family) AS m
    FROM p_family
    WHERE p IS NOT NULL
),
adjusted AS (
    SELECT family, member,
           least(CAST(1.0 AS DOUBLE), max((m - i + 1) * p) OVER (
               PARTITION BY family ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS holm_p,
           least(CAST(1.0 AS DOUBLE), min(p / (CAST(i AS DOUBLE) / m)) OVER (
               PARTITION BY family ORDER BY i ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)) AS bh_p
    FROM tested
)
SELECT f.family, f.member, f.p, n.m, a.holm_p, a.bh_p
FROM p_family f
JOIN (SELECT family, count(p) AS m FROM p_family GROUP BY family) n ON n.family = f.family
LEFT JOIN adjusted a ON a.family = f.family AND a.member = f.member
ORDER BY f.family, f.member
