-- table: diff_slices -- per group: accuracy in A and B over the paired cases, flips, McNemar, confidence shift
-- spec: S9 (case-level diff), S8.9 (exact two-sided McNemar on the discordant pairs), S9.2 (counts
--       beside every ratio), S9.8 (exact sums, one division)
-- grain: one row per (dim, key) group of diff_slice_cases
-- input: diff_slice_cases
-- params: none
-- output: dim, key, compared, paired, hits_a, hits_b, accuracy_a, accuracy_b, delta, right_to_wrong,
--         wrong_to_right, flip_rate, mcnemar_p, n_confidence, mean_confidence_shift, label_changed
-- why: delta = (hits_b - hits_a) / paired (one rounding); accuracy = correct / paired, so a case
--      counts only where both runs scored it. The confidence shift is B - A over cases with a finite
--      confidence on both sides.
WITH g AS (
    SELECT dim, key,
           count(*) AS compared,
           count(*) FILTER (WHERE paired) AS paired,
           count(*) FILTER (WHERE paired AND correct_a) AS hits_a,
           count(*) FILTER (WHERE paired AND correct_b) AS hits_b,
           count(*) FILTER (WHERE flip = 'right_to_wrong') AS right_to_wrong,
           count(*) FILTER (WHERE flip = 'wrong_to_right') AS wrong_to_right,
           count(*) FILTER (WHERE isfinite(confidence_a) AND isfinite(confidence_b)) AS n_confidence,
           lc_exact_sum(CASE WHEN isfinite(confidence_a) AND isfinite(confidence_b)
                             THEN confidence_b - confidence_a END) AS confidence_shift_sum,
           count(*) FILTER (WHERE label_changed) AS label_changed
    FROM diff_slice_cases
    GROUP BY dim, key
)
SELECT dim, key, compared, paired, hits_a, hits_b,
       CASE WHEN paired > 0 THEN CAST(hits_a AS DOUBLE) / paired END AS accuracy_a,
       CASE WHEN paired > 0 THEN CAST(hits_b AS DOUBLE) / paired END AS accuracy_b,
       CASE WHEN paired > 0 THEN CAST(hits_b - hits_a AS DOUBLE) / paired END AS delta,
       right_to_wrong, wrong_to_right,
       CASE WHEN paired > 0 THEN CAST(right_to_wrong + wrong_to_right AS DOUBLE) / paired END AS flip_rate,
       lc_mcnemar_p(right_to_wrong, wrong_to_right) AS mcnemar_p,
       n_confidence,
       CASE WHEN n_confidence > 0 THEN confidence_shift_sum / n_confidence END AS mean_confidence_shift,
       label_changed
FROM g
ORDER BY dim = 'overall' DESC, dim, key
