-- metric: score_within_<tolerance> -- share of score answers within the tolerance of their label
-- spec: S3.7 (opt-in per tolerance; bound inclusive; a NaN error is a miss), S9.2
-- grain: one row per (dim, key) group with at least one score case
-- input: slice_errors
-- params: tolerance (finite, >= 0; the caller names the key in %g form)
-- kind: evaluator
-- per_case: yes
-- interval: yes
-- family: accuracy 4
-- published_at: --score-within (each tolerance asked for; opt-in, S3.7)
-- output: dim, key, value, n, hits
SELECT dim, key,
       sum(lc_score_within(err, $tolerance) * n) / CAST(sum(n) AS DOUBLE) AS value,
       sum(n) AS n,
       CAST(sum(lc_score_within(err, $tolerance) * n) AS BIGINT) AS hits
FROM slice_errors
GROUP BY dim, key
