-- gate: thresholds -- the --min/--max limits (and --min-accuracy/--max-ece) that the overall metrics violate
-- spec: S6.2 (assembly, done by the caller), S6.3 (mins in order, then maxs; absent, then NaN, then the
--       inclusive bound; *_ms metrics are not exempt)
-- grain: one row per violated limit; no rows means the thresholds pass
-- input: gate_limits (pos, kind 'min'|'max', metric, bound), gate_metrics (side, dim, key, metric, value)
-- params: none
-- output: pos, kind, dim, key, metric, value, bound, failure ('missing'|'nan'|'below'|'above'), severity
-- why: DuckDB orders NaN above every number, so NaN is decided before any comparison.
SELECT * FROM (
    SELECT l.pos, l.kind, 'overall' AS dim, '' AS key, l.metric, m.value, l.bound,
           CASE WHEN m.value IS NULL THEN 'missing'
                WHEN isnan(m.value) THEN 'nan'
                WHEN l.kind = 'min' AND m.value < l.bound THEN 'below'
                WHEN l.kind = 'max' AND m.value > l.bound THEN 'above'
           END AS failure,
           'error' AS severity
    FROM gate_limits l
    LEFT JOIN gate_metrics m
           ON m.side = 'candidate' AND m.dim = 'overall' AND m.metric = l.metric
)
WHERE failure IS NOT NULL
ORDER BY pos
