-- table: policy_verdicts -- every gate-policy rule's final verdict: policy_measures with `adjust` and `on_insufficient` applied
-- spec: S6.5, S6.6 (a missing measurement never passes); `adjust` and `on_insufficient` are
--       laya-cases extensions (docs/ci.md), S9.2 (the numbers behind each verdict are published)
-- grain: one row per policy rule
-- input: policy_measures, gate_rules (pos, adjust, on_insufficient), adjusted_p (family 'policy',
--        member = the rule's position), policy_intervals (bootstrap/intervals.sql over policy_replicates.sql)
-- params: none
-- output: the policy_measures columns, then adjust, on_insufficient, holm_p, bh_p, adjusted_p,
--         ci_lower, ci_upper, B_used, insufficient_evidence, verdict ('pass', 'fail', 'insufficient'),
--         failure (null = not a failure)
-- why: a failure found before the relative comparison (missing, count, coverage, baseline) stands.
--      With `on_insufficient`, a rule whose paired bootstrap 95% interval of the delta reaches both
--      -bound and +bound (or that has no interval) is "insufficient": the slice cannot tell a
--      change of the rule's size in either direction, so neither a pass nor a drop is reported; it
--      fails only with on_insufficient = 'fail'. With `adjust`, a significant drop needs its
--      Holm / Benjamini-Hochberg p-value, over every significant_at rule of the policy, below
--      significant_at (the adjusted p is never below the raw one, so it only removes failures).
WITH joined AS (
    SELECT m.*, r.adjust, r.on_insufficient, a.holm_p, a.bh_p,
           CASE r.adjust WHEN 'holm' THEN a.holm_p WHEN 'bh' THEN a.bh_p END AS adjusted_p,
           i.lower AS ci_lower, i.upper AS ci_upper, i.B_used,
           CASE WHEN r.on_insufficient IS NOT NULL
                THEN lc_insufficient_evidence(i.lower, i.upper, m.bound) END AS insufficient_evidence,
           m.failure IN ('missing', 'count', 'min', 'max', 'coverage', 'base_missing', 'base_count') AS measured_failure
    FROM policy_measures m
    JOIN gate_rules r ON r.pos = m.pos
    LEFT JOIN adjusted_p a ON a.family = 'policy' AND a.member = CAST(m.pos AS VARCHAR)
    LEFT JOIN policy_intervals i ON i.key = CAST(m.pos AS VARCHAR) AND i.metric = 'delta'
),
judged AS (
    SELECT *,
           CASE WHEN measured_failure THEN failure
                WHEN on_insufficient IS NOT NULL AND unpaired > 0 THEN 'unpaired'
                WHEN on_insufficient IS NOT NULL AND coalesce(insufficient_evidence, true) THEN 'insufficient'
                WHEN failure = 'significant' AND adjust IS NOT NULL AND NOT adjusted_p < significant_at THEN NULL
                ELSE failure
           END AS outcome
    FROM joined
)
SELECT pos, dim, key, metric, limit_name, bound, min_count, significant_at, current, n, base_value, base_n,
       drift, right_to_wrong, wrong_to_right, p_value, unpaired,
       adjust, on_insufficient, holm_p, bh_p, adjusted_p, ci_lower, ci_upper, B_used, insufficient_evidence,
       CASE WHEN outcome = 'insufficient' THEN 'insufficient' WHEN outcome IS NULL THEN 'pass' ELSE 'fail' END AS verdict,
       CASE WHEN outcome = 'insufficient' AND on_insufficient = 'pass' THEN NULL ELSE outcome END AS failure
FROM judged
ORDER BY pos
