-- table: policy_pairs -- each significant_at rule's paired cases: the candidate's and the baseline's score at one position
-- spec: S6.5 (`significant_at`, `adjust`, `on_insufficient`: laya-cases extensions), S6.6
-- grain: one row per (rule, case position) with the case in the rule's slice on the candidate side and
--        a score for the rule's metric on both sides
-- input: gate_rules (pos, dim, key, metric, significant_at), gate_case_keys, gate_case_scores
-- params: none
-- output: pos, case_no, score, base_score
-- why: the two runs' cases pair by position (row order, then `expected` order), which equal dataset
--      bytes guarantee (policy_measures.sql refuses the test otherwise); the McNemar flips and the
--      paired bootstrap of the delta both read these pairs.
SELECT r.pos, k.case_no, c.score, b.score AS base_score
FROM gate_rules r
JOIN gate_case_keys k ON k.side = 'candidate' AND k.dim = r.dim AND k.key = r.key
JOIN gate_case_scores c ON c.side = 'candidate' AND c.case_no = k.case_no AND c.metric = r.metric
JOIN gate_case_scores b ON b.side = 'baseline' AND b.case_no = k.case_no AND b.metric = r.metric
WHERE r.significant_at IS NOT NULL
