-- table: diff_class_units -- each class's counts per group: those of any one of its rows (they are equal)
-- spec: S9.5
-- grain: one row per (class, dim, key) where the class's rows have a paired case
-- input: diff_unit_classes, diff_units
-- params: none
-- output: class, dim, key, n, hits_a, hits_b
SELECT c.class, u.dim, u.key, u.n, u.hits_a, u.hits_b
FROM (SELECT class, min(unit) AS unit FROM diff_unit_classes GROUP BY class) c
JOIN diff_units u ON u.unit = c.unit
