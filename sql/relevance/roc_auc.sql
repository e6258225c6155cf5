-- table: rel_auc -- ROC-AUC of every scoring run, tie-aware
-- spec: S8.7 (sum over positives of #negatives strictly below + 1/2 #negatives equal, over #pos * #neg; a run
--       lacking either class has none), S8.6 (a missing yes score reads 0.0)
-- grain: one row per scoring run of rel_items
-- input: rel_items
-- params: none
-- output: run_id, n_pos, n_neg, roc_auc (NULL without both classes; one IEEE division of exact integers
--         2*numerator / 2*n_pos*n_neg)
WITH s AS (
    SELECT run_id, coalesce(yes_score, 0.0) AS score,
           count(*) FILTER (WHERE gold) AS npos, count(*) FILTER (WHERE NOT gold) AS nneg
    FROM rel_items WHERE mode = 'scoring'
    GROUP BY run_id, coalesce(yes_score, 0.0)
), below AS (
    SELECT run_id, npos, nneg,
           coalesce(sum(nneg) OVER (PARTITION BY run_id ORDER BY score
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS neg_below
    FROM s
)
SELECT run_id, sum(npos) AS n_pos, sum(nneg) AS n_neg,
       CASE WHEN sum(npos) > 0 AND sum(nneg) > 0 THEN
           CAST(sum(CAST(2 * npos * neg_below + npos * nneg AS HUGEINT)) AS DOUBLE)
           / CAST(2 * CAST(sum(npos) AS HUGEINT) * sum(nneg) AS DOUBLE) END AS roc_auc
FROM below GROUP BY run_id
