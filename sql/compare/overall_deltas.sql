-- compare: overall_deltas -- the baseline's overall metrics against this run's, one delta per metric
-- spec: S6.4 step 4 (baseline order; (a) *_ms skipped unless a tolerance names it; (b) allowed =
--       tolerance or 0.0, exact by default; (c) a coverage metric under a coverage-definition
--       conflict is incomparable; (d) missing from the candidate fails; (e) |value - baseline| <=
--       allowed in binary64, no epsilon, NaN anywhere fails), S6.4 delta lines sorted by metric
-- grain: one row per compared baseline metric (skipped *_ms metrics have no row)
-- input: cmp_baseline (pos, metric, value, coverage_metric: the catalogue's `-- coverage: yes`),
--        cmp_tolerances (metric, tolerance), gate_metrics,
--        cmp_reference_order (metric, value: ece/brier/aurc in the reference's summation order, set
--        only against a reference-written baseline; see laya_cases.query.reference_order)
-- params: coverage_conflict (the S6.4 (c) reason for this pair of documents, or null)
-- output: pos, metric, baseline, value, diff, tolerance, status ('pass'|'fail'|'missing'|'incomparable'),
--         reason
-- why: DuckDB orders NaN above every number (x <= NaN is true), so NaN is tested before `<=`.
WITH joined AS (
    SELECT b.pos, b.metric, b.value AS baseline, coalesce(r.value, c.value) AS value,
           coalesce(r.value, c.value) - b.value AS diff,
           coalesce(t.tolerance, 0.0) AS tolerance,
           b.coverage_metric,
           t.metric IS NOT NULL AS named
    FROM cmp_baseline b
    LEFT JOIN cmp_tolerances t ON t.metric = b.metric
    LEFT JOIN gate_metrics c ON c.side = 'candidate' AND c.dim = 'overall' AND c.metric = b.metric
    LEFT JOIN cmp_reference_order r ON r.metric = b.metric AND c.value IS NOT NULL
)
SELECT pos, metric, baseline, value,
       CASE WHEN coverage_metric AND $coverage_conflict IS NOT NULL THEN CAST('nan' AS DOUBLE) ELSE diff END AS diff,
       tolerance,
       CASE WHEN coverage_metric AND $coverage_conflict IS NOT NULL THEN 'incomparable'
            WHEN value IS NULL THEN 'missing'
            WHEN isnan(diff) OR isnan(tolerance) OR NOT (abs(diff) <= tolerance) THEN 'fail'
            ELSE 'pass'
       END AS status,
       CASE WHEN coverage_metric THEN $coverage_conflict END AS reason
FROM joined
WHERE named OR NOT suffix(metric, '_ms')
ORDER BY metric
