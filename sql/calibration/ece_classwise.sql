-- query: ece_classwise -- class-wise ECE of the choice cases, per phase: the mean over classes of each class's 15-bin ECE
-- spec: S3.10 (15 equal-width bins; a probability outside [0, 1] or NaN is in no bin but counts in N_c)
-- grain: one row per phase that has choice cases
-- input: calib_applied
-- params: none
-- output: phase, ece_classwise, classes, n
-- why: ECE reads only the top probability; class-wise ECE (Kull et al. 2019) asks of every option label
--      whether P(label) matches how often the label is the gold one. A class is an option label; its
--      cases are the choice cases offering it (MASSIVE offers 20 of 59 intents per row), each with
--      P(label) and whether the label is gold. ECE_c = sum_b n_b / N_c * |mean P - gold rate|; the result is
--      the unweighted mean over classes (added exactly, S9.8).
WITH per_option AS (
    SELECT phase, options[i] AS label, probs[i] AS p, gold = i - 1 AS hit
    FROM calib_applied, range(1, len(options) + 1) r(i)
    WHERE answer_type = 'choice'
), totals AS (
    SELECT phase, label, count(*) AS n_c FROM per_option GROUP BY ALL
), per_bin AS (
    SELECT phase, label, lc_reliability_bin(p) AS bin, count(*) AS n_b,
           lc_exact_sum(p) / CAST(count(*) AS DOUBLE) AS mean_p,
           CAST(count(*) FILTER (WHERE hit) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS rate
    FROM per_option WHERE lc_reliability_bin(p) IS NOT NULL GROUP BY ALL
), per_class AS (
    SELECT t.phase, t.label, t.n_c,
           coalesce(list_sum(list(CAST(b.n_b AS DOUBLE) / CAST(t.n_c AS DOUBLE) * abs(b.mean_p - b.rate)
                                  ORDER BY b.bin)), 0.0) AS ece_c
    FROM totals t LEFT JOIN per_bin b USING (phase, label)
    GROUP BY t.phase, t.label, t.n_c
)
SELECT phase, lc_exact_sum(ece_c) / CAST(count(*) AS DOUBLE) AS ece_classwise, count(*) AS classes,
       (SELECT count(*) FROM calib_applied a WHERE a.phase = per_class.phase AND a.answer_type = 'choice') AS n
FROM per_class GROUP BY phase
