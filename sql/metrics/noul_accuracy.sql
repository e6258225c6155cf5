-- metric: noul_accuracy -- share of noul answers whose (noul >= 0.5) equals their boolean label
-- spec: S3.5, S3.2 (answer type noul and a boolean label), S9.2
-- grain: one row per (dim, key) group with at least one applicable case
-- input: slice_sums
-- params: none
-- kind: evaluator
-- per_case: yes
-- interval: yes
-- family: accuracy 2
-- output: dim, key, metric, value, n, hits
SELECT dim, key, 'noul_accuracy' AS metric,
       CAST(sum(CASE WHEN correct THEN n ELSE 0 END) AS DOUBLE) / CAST(sum(n) AS DOUBLE) AS value,
       sum(n) AS n,
       sum(CASE WHEN correct THEN n ELSE 0 END) AS hits
FROM slice_sums
WHERE lc_accuracy_value('noul', answer_type, correct) IS NOT NULL
GROUP BY dim, key
