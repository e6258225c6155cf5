-- table: policy_measures -- every gate-policy rule measured on the candidate (and the baseline), with its verdict
-- spec: S6.5 (rule form; `significant_at` is the laya-cases extension), S6.6 step 3 (first failure
--       wins: value missing, candidate count, absolute limit; relative: coverage definition,
--       baseline value, baseline count, drift > limit and not isclose(rel 1e-12, abs 1e-12)),
--       S9.2 (the counts behind every verdict are published)
-- grain: one row per policy rule
-- input: gate_rules (pos, dim, key, metric, min_count, limit_name, bound, coverage_conflict,
--        significant_at, paired_metric: the metric's catalogue kind is paired), gate_metrics (side, dim, key, metric, value), gate_cases (side, case_no,
--        qid, paired), gate_case_keys (side, case_no, dim, key), gate_case_scores (side, case_no,
--        metric, score), policy_pairs (the significant_at rules' paired scores)
-- params: none
-- output: pos, dim, key, metric, limit_name, bound, min_count, significant_at, current, n, base_value,
--         base_n, drift, right_to_wrong, wrong_to_right, p_value, unpaired, failure (null = pass)
-- why: the verdict before `adjust` and `on_insufficient` (policy_verdicts.sql). A metric value
--      must be a finite number to count as measured; a count is of cases in the slice
--      that are valid for the metric: a finite confidence and a boolean correctness for the
--      confidence metrics, a finite per-case score otherwise (S6.6). `significant_at` pairs the two
--      runs' cases by position (row order, then `expected` order), which is what equal dataset bytes
--      guarantee; a relative rule already demands that identity (S6.6 step 2).
WITH rules AS (
    SELECT r.*,
           r.paired_metric AS confidence_metric,
           r.limit_name IN ('max_drop', 'max_increase') AS relative
    FROM gate_rules r
),
valid AS (
    SELECT r.pos, k.side, k.case_no, s.score
    FROM rules r
    JOIN gate_case_keys k ON k.dim = r.dim AND k.key = r.key
    JOIN gate_cases c ON c.side = k.side AND c.case_no = k.case_no
    LEFT JOIN gate_case_scores s ON s.side = k.side AND s.case_no = k.case_no AND s.metric = r.metric
    WHERE CASE WHEN r.confidence_metric THEN c.paired ELSE s.score IS NOT NULL END
),
counts AS (
    SELECT pos, count(*) FILTER (WHERE side = 'candidate') AS n, count(*) FILTER (WHERE side = 'baseline') AS base_n
    FROM valid GROUP BY pos
),
measured AS (
    SELECT r.pos,
           max(m.value) FILTER (WHERE m.side = 'candidate') AS current,
           max(m.value) FILTER (WHERE m.side = 'baseline') AS base_value
    FROM rules r
    LEFT JOIN gate_metrics m ON m.dim = r.dim AND m.key = r.key AND m.metric = r.metric AND isfinite(m.value)
    GROUP BY r.pos
),
pairing AS (
    SELECT count(*) FILTER (WHERE c.qid IS DISTINCT FROM b.qid) AS unpaired
    FROM (SELECT * FROM gate_cases WHERE side = 'candidate') c
    FULL OUTER JOIN (SELECT * FROM gate_cases WHERE side = 'baseline') b ON b.case_no = c.case_no
),
flips AS (
    SELECT pos,
           count(*) FILTER (WHERE base_score = 1.0 AND score = 0.0) AS right_to_wrong,
           count(*) FILTER (WHERE base_score = 0.0 AND score = 1.0) AS wrong_to_right
    FROM policy_pairs
    GROUP BY pos
),
drifts AS (
    SELECT r.*, v.current, v.base_value,
           coalesce(k.n, 0) AS n, coalesce(k.base_n, 0) AS base_n,
           CASE r.limit_name WHEN 'max_drop' THEN v.base_value - v.current
                             WHEN 'max_increase' THEN v.current - v.base_value END AS drift,
           coalesce(f.right_to_wrong, 0) AS right_to_wrong, coalesce(f.wrong_to_right, 0) AS wrong_to_right,
           (SELECT unpaired FROM pairing) AS unpaired
    FROM rules r
    JOIN measured v ON v.pos = r.pos
    LEFT JOIN counts k ON k.pos = r.pos
    LEFT JOIN flips f ON f.pos = r.pos
),
judged AS (
    SELECT d.*,
           CASE WHEN d.significant_at IS NOT NULL THEN lc_mcnemar_p(d.right_to_wrong, d.wrong_to_right) END AS p_value,
           d.drift > d.bound
             AND NOT (d.drift = d.bound
                      OR abs(d.drift - d.bound) <= greatest(1e-12 * greatest(abs(d.drift), abs(d.bound)), 1e-12))
             AS exceeded
    FROM drifts d
)
SELECT pos, dim, key, metric, limit_name, bound, min_count, significant_at, current, n, base_value, base_n,
       drift, right_to_wrong, wrong_to_right, p_value, unpaired,
       CASE WHEN current IS NULL THEN 'missing'
            WHEN n < min_count THEN 'count'
            WHEN NOT relative THEN
                CASE WHEN limit_name = 'min' AND current < bound THEN 'min'
                     WHEN limit_name = 'max' AND current > bound THEN 'max' END
            WHEN coverage_conflict IS NOT NULL THEN 'coverage'
            WHEN base_value IS NULL THEN 'base_missing'
            WHEN base_n < min_count THEN 'base_count'
            WHEN NOT exceeded THEN NULL
            WHEN significant_at IS NULL THEN 'exceeded'
            WHEN unpaired > 0 THEN 'unpaired'
            WHEN p_value < significant_at THEN 'significant'
       END AS failure
FROM judged
ORDER BY pos
