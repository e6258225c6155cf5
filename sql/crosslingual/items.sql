-- query: items -- per item, the share of languages that answered it correctly, least consistent first
-- spec: S7.1 (parallel items), S9.2 (counts next to every ratio); docs/crosslingual.md ("per item")
-- grain: one row per (item_id, qid) of xl_cases
-- input: xl_cases
-- params: pivot
-- output: item_id, qid, gold, languages, right, share_right (right / languages), all_right, none_right,
--         pivot_right (1/0 for the pivot language's case, null when the pivot did not ask the item),
--         distinct_predictions (how many different labels the languages predicted), wrong_langs (sorted)
-- why: the least consistent items are the ones with the smallest share_right that some language still
--      gets right; items right everywhere or nowhere sort after them (share 1.0 last, share 0.0 just
--      before: a consistent failure is a model problem, not a cross-lingual one). Ties: item_id, qid.
SELECT item_id, qid, min(gold) AS gold,
       count(*) AS languages, sum(is_right) AS "right",
       sum(is_right) / CAST(count(*) AS DOUBLE) AS share_right,
       (sum(is_right) = count(*)) AS all_right, (sum(is_right) = 0) AS none_right,
       max(CASE WHEN lang = $pivot THEN is_right END) AS pivot_right,
       count(DISTINCT predicted) AS distinct_predictions,
       coalesce(list_sort(list(lang) FILTER (WHERE is_right = 0)), CAST([] AS VARCHAR[])) AS wrong_langs
FROM xl_cases
GROUP BY item_id, qid
ORDER BY (sum(is_right) = count(*)), (sum(is_right) = 0), sum(is_right) / CAST(count(*) AS DOUBLE), item_id, qid
