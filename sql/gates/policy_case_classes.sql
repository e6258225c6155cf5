-- table: policy_case_classes -- each candidate case position's class: cases with the same scores in every on_insufficient rule share one
-- spec: S6.5 (`on_insufficient`), S9.5
-- grain: one row per candidate case position paired in at least one on_insufficient rule
-- input: policy_pairs, gate_rules (pos, on_insufficient)
-- params: none
-- output: unit (the case position, `case_no`), class (0, 1, ...: numbered in the order of their profiles)
-- why: as sql/compare/diff_unit_classes.sql: a replicate adds up its drawn cases' scores, so cases
--      with equal scores in every rule are interchangeable and the S9.5 stream is counted per class
--      (laya_cases/query/paired_bootstrap.py); a case in no such rule has no row (its own class, read
--      by no rule).
WITH pairs AS (
    SELECT p.pos, p.case_no, p.score, p.base_score
    FROM policy_pairs p JOIN gate_rules r ON r.pos = p.pos AND r.on_insufficient IS NOT NULL
), entries AS (               -- each distinct (rule, scores) numbered: a case's profile is a list of integers
    SELECT pos, score, base_score, CAST(row_number() OVER (ORDER BY pos, score, base_score) AS BIGINT) AS entry
    FROM (SELECT DISTINCT pos, score, base_score FROM pairs)
)
SELECT case_no AS unit, CAST(dense_rank() OVER (ORDER BY profile) - 1 AS BIGINT) AS class
FROM (SELECT p.case_no, list(e.entry ORDER BY e.entry) AS profile
      FROM pairs p JOIN entries e USING (pos, score, base_score)
      GROUP BY p.case_no)
