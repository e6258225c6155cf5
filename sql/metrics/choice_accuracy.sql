-- metric: choice_accuracy -- share of choice answers equal to their string label
-- spec: S3.4, S3.2 (answer type choice and a string label), S9.2 (n and hits beside the ratio)
-- grain: one row per (dim, key) group with at least one applicable case (S0.5: absent, not zero)
-- input: slice_sums
-- params: none
-- kind: evaluator
-- per_case: yes
-- interval: yes
-- family: accuracy 1
-- output: dim, key, metric, value, n, hits
SELECT dim, key, 'choice_accuracy' AS metric,
       CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS value,
       sum(n) AS n,
       sum(CASE WHEN correct THEN n ELSE 0 END) AS hits
FROM slice_sums
WHERE lc_accuracy_value('choice', answer_type, correct) IS NOT NULL
GROUP BY dim, key
