-- query: shortlist_recall_curve -- recall@k for k = 1..K of a shortlist run, from the stored rank order
-- spec: S7.18 (kept labels in rank order), S7.19 (recall = cases whose gold is kept / cases)
-- grain: one row per k from 1 to the longest stored shortlist
-- input: cases (view over the warehouse)
-- params: run_id
-- output: k, n, recalled, recall
-- why: retrieval keeps the top K in rank order, so the top k' <= K are the first k' stored labels: a
--      case's gold is kept at every k' >= its position. A pass-through case (scores null: labels in
--      criteria order, no ranking ran) counts as recalled only at k' >= its label count. At k = K the
--      value is the report's shortlist_recall_at_k. No model: a curve from one run's stored rows.
WITH c AS (
    SELECT list_position(shortlist_labels, json_extract_string(expected_json, '$')) AS pos,
           shortlist_scores IS NULL AS passthrough, len(options) AS n_options, len(shortlist_labels) AS kept
    FROM cases
    WHERE run_id = $run_id AND shortlist_labels IS NOT NULL AND shortlist_status IS NOT NULL
), ks AS (
    SELECT unnest(range(1, (SELECT max(kept) FROM c) + 1)) AS k
)
SELECT k, count(*) AS n,
       count(*) FILTER (WHERE pos IS NOT NULL AND CASE WHEN passthrough THEN k >= n_options ELSE pos <= k END)
           AS recalled,
       CAST(count(*) FILTER (WHERE pos IS NOT NULL AND CASE WHEN passthrough THEN k >= n_options ELSE pos <= k END)
            AS DOUBLE) / CAST(count(*) AS DOUBLE) AS recall
FROM ks CROSS JOIN c
GROUP BY k
ORDER BY k
