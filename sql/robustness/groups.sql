-- table: robustness_groups -- the S7.16 group summary of a robustness run, for all languages and per language
-- spec: S7.16 (groups option_order, label_rename and overall = every pair pooled, pair-weighted;
--       mean_probability_drift = mean of the per-pair means; max over all pairs and options;
--       worst_confidence_increase_on_disagreement = max(0, drifts of disagreeing pairs), 0.0 when none),
--       S7.15 (the pair metrics), S3.3 (means are fsum / n)
-- grain: one row per (scope, language, kind) with at least one pair; scope 'all' has language null, scope
--        'language' one row per language key ('' for rows without a language); an absent row is the S7.16
--        empty group {"n": 0}
-- input: robustness_pairs (sql/robustness/pairs.sql)
-- params: none
-- output: scope, language, kind, n, n_agree, semantic_agreement_rate, mean_probability_drift,
--         max_probability_drift, mean_js_divergence, mean_confidence_drift, mean_absolute_confidence_drift,
--         n_disagree, worst_confidence_increase_on_disagreement
WITH expanded AS (
    SELECT 'all' AS scope, CAST(NULL AS VARCHAR) AS language, variant AS kind, * EXCLUDE (language_key, variant)
    FROM robustness_pairs
    UNION ALL
    SELECT 'all', NULL, 'overall', * EXCLUDE (language_key, variant) FROM robustness_pairs
    UNION ALL
    SELECT 'language', coalesce(language_key, ''), variant, * EXCLUDE (language_key, variant) FROM robustness_pairs
    UNION ALL
    SELECT 'language', coalesce(language_key, ''), 'overall', * EXCLUDE (language_key, variant) FROM robustness_pairs
)
SELECT scope, language, kind,
       count(*) AS n,
       count(*) FILTER (WHERE agree) AS n_agree,
       CAST(count(*) FILTER (WHERE agree) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS semantic_agreement_rate,
       lc_exact_mean_w(mean_drift, 1) AS mean_probability_drift,
       max(max_drift) AS max_probability_drift,
       lc_exact_mean_w(js, 1) AS mean_js_divergence,
       lc_exact_mean_w(confidence_drift, 1) AS mean_confidence_drift,
       lc_exact_mean_w(abs(confidence_drift), 1) AS mean_absolute_confidence_drift,
       count(*) FILTER (WHERE NOT agree) AS n_disagree,
       greatest(0.0, coalesce(max(confidence_drift) FILTER (WHERE NOT agree), 0.0))
           AS worst_confidence_increase_on_disagreement
FROM expanded
GROUP BY scope, language, kind
ORDER BY scope, language, kind
