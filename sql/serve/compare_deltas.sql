-- query: compare_deltas -- each run against the first run named, per group: `diff`'s paired numbers and an analytic 95% interval
-- spec: S9 (case-level comparison: case_id joins runs of one dataset); S2.9 (a case is paired when both
--       runs scored it); S9.5 (the resampling unit is the dataset row: the interval's clusters);
--       S8.9 (exact two-sided McNemar); S9.8 (exact sums, one division)
-- grain: one row per (run_index >= 2, dim, key) with at least one case in the first run and that run
-- input: cases
-- params: runs, dim (runs: the run ids in the order named, run_index 1..K, the first the reference;
--         dim: language, model, qid, tag, or null for overall only, checked by the caller)
-- output: run_index, run_id, dim, key, compared, paired, hits_a, hits_b, accuracy_a, accuracy_b, delta,
--         ci_lower, ci_upper, units, right_to_wrong, wrong_to_right, flip_rate, mcnemar_p, n_confidence,
--         mean_confidence_shift
-- why: every column but the interval is sql/compare/diff_slices.sql's for the pair (first run, run k),
--      the same formulas over the same cases (slice keys from the first run, as diff's A), so the page
--      equals `diff FIRST RUNk --json`. The interval replaces diff's B=2000 paired row bootstrap (tens of
--      seconds at 1M decisions) by its normal approximation: delta = D/N is a ratio of sums over the
--      dataset rows r (d_r = hits_b - hits_a, n_r = paired cases of the row), whose linearised variance
--      is R/(R-1) * sum_r (d_r - delta * n_r)^2 / N^2 over the R rows with a paired case (the sandwich /
--      cluster-robust variance of a ratio estimator); the interval is delta +- 1.959964 * sqrt(variance)
--      (null below 2 rows); the squares are summed exactly (lc_exact_sum), so the bounds are the same
--      bits whatever order DuckDB adds them in. The full bootstrap is one link away (/compare?a=FIRST&b=RUNk).
WITH named AS (
    SELECT CAST($runs[i] AS VARCHAR) AS run_id, CAST(i AS INTEGER) AS run_index
    FROM range(1, len($runs) + 1) AS t(i)
),
a AS (
    SELECT case_id, row_index, qid, language_key, model_key, list_distinct(tags) AS tags, correct, confidence
    FROM cases WHERE run_id = $runs[1]
),
b AS (
    SELECT c.case_id, n.run_index, n.run_id, c.correct, c.confidence
    FROM cases c JOIN named n ON c.run_id = n.run_id WHERE n.run_index > 1
),
pairs AS (
    SELECT b.run_index, b.run_id, a.row_index, a.qid, a.language_key, a.model_key, a.tags,
           a.correct AS correct_a, b.correct AS correct_b, a.confidence AS confidence_a, b.confidence AS confidence_b,
           coalesce(a.correct IS NOT NULL AND b.correct IS NOT NULL, false) AS paired
    FROM a JOIN b ON a.case_id = b.case_id
),
grouped AS (
    SELECT 'overall' AS dim, '' AS key, p.* FROM pairs p
    UNION ALL SELECT 'language', p.language_key, p.* FROM pairs p WHERE $dim = 'language' AND p.language_key IS NOT NULL
    UNION ALL SELECT 'model', p.model_key, p.* FROM pairs p WHERE $dim = 'model' AND p.model_key IS NOT NULL
    UNION ALL SELECT 'qid', p.qid, p.* FROM pairs p WHERE $dim = 'qid'
    UNION ALL SELECT 'tag', t.tag, p.* FROM pairs p, unnest(p.tags) AS t(tag) WHERE $dim = 'tag'
),
g AS (
    SELECT run_index, run_id, dim, key,
           count(*) AS compared,
           count(*) FILTER (WHERE paired) AS paired,
           count(*) FILTER (WHERE paired AND correct_a) AS hits_a,
           count(*) FILTER (WHERE paired AND correct_b) AS hits_b,
           count(*) FILTER (WHERE correct_a AND NOT correct_b) AS right_to_wrong,
           count(*) FILTER (WHERE NOT correct_a AND correct_b) AS wrong_to_right,
           count(*) FILTER (WHERE isfinite(confidence_a) AND isfinite(confidence_b)) AS n_confidence,
           lc_exact_sum(CASE WHEN isfinite(confidence_a) AND isfinite(confidence_b)
                             THEN confidence_b - confidence_a END) AS confidence_shift_sum
    FROM grouped
    GROUP BY run_index, run_id, dim, key
),
units AS (
    SELECT run_index, dim, key, row_index, count(*) AS n,
           count(*) FILTER (WHERE correct_b) - count(*) FILTER (WHERE correct_a) AS d
    FROM grouped WHERE paired
    GROUP BY run_index, dim, key, row_index
),
spread AS (
    SELECT u.run_index, u.dim, u.key, count(*) AS units,
           lc_exact_sum(power(u.d - CAST(g.hits_b - g.hits_a AS DOUBLE) / g.paired * u.n, 2)) AS ss
    FROM units u JOIN g ON g.run_index = u.run_index AND g.dim = u.dim AND g.key = u.key
    GROUP BY u.run_index, u.dim, u.key
),
r AS (
    SELECT g.*, coalesce(s.units, 0) AS units,
           CASE WHEN g.paired > 0 THEN CAST(g.hits_b - g.hits_a AS DOUBLE) / g.paired END AS delta,
           CASE WHEN s.units >= 2 THEN 1.959963984540054 * sqrt(s.units / (s.units - 1.0) * s.ss)
                                       / g.paired END AS half
    FROM g LEFT JOIN spread s ON s.run_index = g.run_index AND s.dim = g.dim AND s.key = g.key
)
SELECT run_index, run_id, dim, key, compared, paired, hits_a, hits_b,
       CASE WHEN paired > 0 THEN CAST(hits_a AS DOUBLE) / paired END AS accuracy_a,
       CASE WHEN paired > 0 THEN CAST(hits_b AS DOUBLE) / paired END AS accuracy_b,
       delta, delta - half AS ci_lower, delta + half AS ci_upper, units,
       right_to_wrong, wrong_to_right,
       CASE WHEN paired > 0 THEN CAST(right_to_wrong + wrong_to_right AS DOUBLE) / paired END AS flip_rate,
       lc_mcnemar_p(right_to_wrong, wrong_to_right) AS mcnemar_p,
       n_confidence,
       CASE WHEN n_confidence > 0 THEN confidence_shift_sum / n_confidence END AS mean_confidence_shift
FROM r
ORDER BY dim = 'overall' DESC, dim, key, run_index
