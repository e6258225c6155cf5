-- table: boot_values -- F1 and MCC of every run in each bootstrap replicate (input of bootstrap/intervals.sql)
-- spec: S8.9 (percentile bootstrap for F1 and MCC, 2000 item resamples from random.Random(0)), S9.5 (the index
--       stream: replicate b is draws [b*n, (b+1)*n) of randrange(n); an item drawn k times weighs k)
-- grain: one row per (run, replicate, metric)
-- input: rel_items, rel_weights (n, replicate, position, mult: laya_cases.query.resample.replicate_weights(seed, n, B)
--        for every distinct run size n)
-- params: none
-- output: dim (run_id@replicate), key (''), metric (f1 | matthews_corrcoef), value
WITH sized AS (
    SELECT run_id, count(*) AS n FROM rel_items GROUP BY run_id
), c AS (
    SELECT i.run_id, w.replicate,
           coalesce(sum(w.mult) FILTER (WHERE i.gold AND i.verdict), 0) AS tp,
           coalesce(sum(w.mult) FILTER (WHERE i.gold AND NOT i.verdict), 0) AS fn,
           coalesce(sum(w.mult) FILTER (WHERE NOT i.gold AND NOT i.verdict), 0) AS tn,
           coalesce(sum(w.mult) FILTER (WHERE NOT i.gold AND i.verdict), 0) AS fp
    FROM rel_items i JOIN sized s USING (run_id)
    JOIN rel_weights w ON w.n = s.n AND w.position = i.position
    GROUP BY i.run_id, w.replicate
)
SELECT run_id || '@' || replicate AS dim, '' AS key, 'f1' AS metric, lc_rel_f1(tp, fp, fn) AS value FROM c
UNION ALL
SELECT run_id || '@' || replicate, '', 'matthews_corrcoef', lc_rel_mcc(tp, fn, tn, fp) FROM c
