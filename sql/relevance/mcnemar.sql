-- table: rel_mcnemar -- each run against the best-F1 run of its language: exact two-sided McNemar
-- spec: S8.9 (the best-F1 run of a language: highest F1 rounded to 4 decimals, then model_id; the p-value only
--       when item sets and labels match; an unparsed answer counts as wrong)
-- grain: one row per run of rel_metrics
-- input: rel_metrics, rel_items
-- params: none
-- output: run_id, best_run_id, n_paired, b (best right, run wrong), c (best wrong, run right), mcnemar_p (NULL for
--         the best run itself and where the item sets or labels differ)
WITH best AS (
    SELECT language, arg_min(run_id, (-round(f1, 4), model_id, run_id)) AS best_run_id
    FROM rel_metrics GROUP BY language
), pairs AS (
    SELECT m.run_id, b.best_run_id, m.n AS n_run, bm.n AS n_best
    FROM rel_metrics m JOIN best b USING (language) JOIN rel_metrics bm ON bm.run_id = b.best_run_id
), joined AS (
    SELECT p.run_id, count(x.item_id) AS n_paired,
           count(*) FILTER (WHERE x.gold <> y.gold) AS label_mismatch,
           count(*) FILTER (WHERE coalesce(y.verdict = y.gold, false) AND NOT coalesce(x.verdict = x.gold, false)) AS b,
           count(*) FILTER (WHERE NOT coalesce(y.verdict = y.gold, false) AND coalesce(x.verdict = x.gold, false)) AS c
    FROM pairs p
    JOIN rel_items x ON x.run_id = p.run_id
    JOIN rel_items y ON y.run_id = p.best_run_id AND y.item_id = x.item_id
    GROUP BY p.run_id
)
SELECT p.run_id, p.best_run_id, coalesce(j.n_paired, 0) AS n_paired, j.b, j.c,
       CASE WHEN p.run_id <> p.best_run_id AND j.n_paired = p.n_run AND j.n_paired = p.n_best
                 AND j.label_mismatch = 0 THEN lc_mcnemar_p(j.b, j.c) END AS mcnemar_p
FROM pairs p LEFT JOIN joined j USING (run_id)
