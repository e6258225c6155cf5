-- table: boot_values -- paired bootstrap replicates for the leaderboard view: each model's macro F1, its rank,
--        and every pair's F1 difference, all from the same resampled items (input of bootstrap/intervals.sql)
-- spec: S8.9 (bootstrap over items: random.Random(0), 2000 resamples), S9.5 (replicate b is draws
--       [b*n, (b+1)*n) of randrange(n) over the language's items), S8.8 (macro = mean over languages)
-- grain: one row per (model, replicate) for f1 and rank, one per (model pair, replicate) for f1_diff
-- input: rel_items (one run per (model, language), the same items in the same order for every model of a
--        language), rel_weights (n, replicate, position, mult)
-- params: none
-- output: dim (<model index>@<replicate> or <i>-<j>@<replicate>, model index = 1-based by model_id), key (''),
--         metric (f1 | rank | f1_diff), value
WITH sized AS (
    SELECT run_id, count(*) AS n FROM rel_items GROUP BY run_id
), c AS (
    SELECT i.model_id, i.language, w.replicate,
           coalesce(sum(w.mult) FILTER (WHERE i.gold AND i.verdict), 0) AS tp,
           coalesce(sum(w.mult) FILTER (WHERE i.gold AND NOT i.verdict), 0) AS fn,
           coalesce(sum(w.mult) FILTER (WHERE NOT i.gold AND i.verdict), 0) AS fp
    FROM rel_items i JOIN sized s USING (run_id)
    JOIN rel_weights w ON w.n = s.n AND w.position = i.position
    GROUP BY i.model_id, i.language, w.replicate
), f AS (
    SELECT model_id, replicate, lc_exact_mean_w(lc_rel_f1(tp, fp, fn), 1) AS f1
    FROM c GROUP BY model_id, replicate
), m AS (
    SELECT f.*, dense_rank() OVER (ORDER BY model_id) AS k,
           rank() OVER (PARTITION BY replicate ORDER BY f1 DESC) AS rnk
    FROM f
)
SELECT k || '@' || replicate AS dim, '' AS key, 'f1' AS metric, f1 AS value FROM m
UNION ALL
SELECT k || '@' || replicate, '', 'rank', CAST(rnk AS DOUBLE) FROM m
UNION ALL
SELECT x.k || '-' || y.k || '@' || x.replicate, '', 'f1_diff', x.f1 - y.f1
FROM m x JOIN m y ON x.replicate = y.replicate AND x.k < y.k
