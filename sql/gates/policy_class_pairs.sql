-- table: policy_class_pairs -- each class's scores per on_insufficient rule: those of any one of its cases (they are equal)
-- spec: S6.5, S9.5
-- grain: one row per (class, rule) where the class's cases are paired in the rule
-- input: policy_case_classes, policy_pairs, gate_rules (pos, on_insufficient)
-- params: none
-- output: class, pos, score, base_score
SELECT c.class, p.pos, p.score, p.base_score
FROM (SELECT class, min(unit) AS unit FROM policy_case_classes GROUP BY class) c
JOIN policy_pairs p ON p.case_no = c.unit
JOIN gate_rules r ON r.pos = p.pos AND r.on_insufficient IS NOT NULL
