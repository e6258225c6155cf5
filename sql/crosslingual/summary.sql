-- query: summary -- the run's cross-lingual consistency in one row
-- spec: S7.1 (parallel items), S9.2 (counts next to every ratio); docs/crosslingual.md ("summary")
-- grain: one row over xl_cases (its items are (item_id, qid) pairs)
-- input: xl_cases
-- params: none
-- output: items, languages, cases, complete_items (items asked in every language of the run),
--         all_right_rate, none_right_rate (over all items, each in the languages that asked it),
--         complete_all_right_rate, complete_none_right_rate (over complete items; null when none),
--         mean_share_right (mean over items of right / languages)
-- why: S9.8: the rates average 0/1 decimals (DuckDB sums those exactly, as HUGEINT, then divides once);
--      the shares are doubles whose plain avg() adds in thread-scheduling order (0.19999999999999998 or
--      0.2 on the same store), so their mean is the exactly rounded sum over one division.
WITH per_item AS (
    SELECT item_id, qid, count(*) AS langs, sum(is_right) AS n_right FROM xl_cases GROUP BY item_id, qid
), total AS (
    SELECT count(DISTINCT lang) AS languages, count(*) AS cases FROM xl_cases
)
SELECT count(*) AS items, min(total.languages) AS languages, min(total.cases) AS cases,
       count(*) FILTER (WHERE langs = total.languages) AS complete_items,
       avg(CASE WHEN n_right = langs THEN 1.0 ELSE 0.0 END) AS all_right_rate,
       avg(CASE WHEN n_right = 0 THEN 1.0 ELSE 0.0 END) AS none_right_rate,
       avg(CASE WHEN n_right = langs THEN 1.0 ELSE 0.0 END) FILTER (WHERE langs = total.languages)
           AS complete_all_right_rate,
       avg(CASE WHEN n_right = 0 THEN 1.0 ELSE 0.0 END) FILTER (WHERE langs = total.languages)
           AS complete_none_right_rate,
       lc_exact_mean_w(n_right / CAST(langs AS DOUBLE), 1) AS mean_share_right
FROM per_item, total
