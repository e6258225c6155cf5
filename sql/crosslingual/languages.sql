-- query: languages -- per language: accuracy, agreement with the pivot language, and whether its errors
--        concentrate on the items the pivot gets right
-- spec: S7.1 (parallel items), S9.2 (counts next to every ratio); docs/crosslingual.md ("per language")
-- grain: one row per lang of xl_cases: the pivot first, then by error_excess descending, then lang
-- input: xl_cases
-- params: pivot
-- output: lang, n (cases), accuracy, shared (cases whose item the pivot also asked), agreement (share of
--         shared cases whose predicted label equals the pivot's; a missing prediction never agrees),
--         pivot_right_n, pivot_wrong_n, acc_on_pivot_right, acc_on_pivot_wrong (null when 0 cases),
--         errors (wrong shared cases), errors_on_pivot_right, error_share_on_pivot_right
--         (errors_on_pivot_right / errors; null without errors), pivot_right_rate (pivot_right_n / shared:
--         the share a language's errors would have there if they fell regardless of the pivot),
--         error_excess (error_share_on_pivot_right - pivot_right_rate), error_lift (share / rate),
--         concentrated (error_excess > 0 and the language is not the pivot)
-- why: error_excess > 0 means the language fails more often on items the pivot gets right than the
--      pivot's accuracy predicts, i.e. acc_on_pivot_right < acc_on_pivot_wrong: the item is answerable,
--      its translation is what goes wrong. error_excess < 0: errors sit on items hard in the pivot too.
WITH p AS (
    SELECT item_id, qid, predicted AS p_pred, is_right AS p_right FROM xl_cases WHERE lang = $pivot
), j AS (
    SELECT c.lang, c.is_right, p.p_right,
           CASE WHEN p.p_right IS NULL THEN NULL
                WHEN c.predicted IS NOT NULL AND c.predicted = p.p_pred THEN 1 ELSE 0 END AS agree
    FROM xl_cases c LEFT JOIN p USING (item_id, qid)
), g AS (
    SELECT lang, count(*) AS n, avg(is_right) AS accuracy,
           count(p_right) AS shared, avg(agree) AS agreement,
           count(*) FILTER (WHERE p_right = 1) AS pivot_right_n,
           count(*) FILTER (WHERE p_right = 0) AS pivot_wrong_n,
           avg(is_right) FILTER (WHERE p_right = 1) AS acc_on_pivot_right,
           avg(is_right) FILTER (WHERE p_right = 0) AS acc_on_pivot_wrong,
           count(*) FILTER (WHERE p_right IS NOT NULL AND is_right = 0) AS errors,
           count(*) FILTER (WHERE p_right = 1 AND is_right = 0) AS errors_on_pivot_right
    FROM j GROUP BY lang
), m AS (
    SELECT *, CASE WHEN errors > 0 THEN errors_on_pivot_right / CAST(errors AS DOUBLE) END
                  AS error_share_on_pivot_right,
              CASE WHEN shared > 0 THEN pivot_right_n / CAST(shared AS DOUBLE) END AS pivot_right_rate
    FROM g
)
SELECT lang, n, accuracy, shared, agreement, pivot_right_n, pivot_wrong_n, acc_on_pivot_right, acc_on_pivot_wrong,
       errors, errors_on_pivot_right, error_share_on_pivot_right, pivot_right_rate,
       error_share_on_pivot_right - pivot_right_rate AS error_excess,
       CASE WHEN pivot_right_rate > 0 THEN error_share_on_pivot_right / pivot_right_rate END AS error_lift,
       coalesce(lang <> $pivot AND error_share_on_pivot_right - pivot_right_rate > 0, false) AS concentrated
FROM m
ORDER BY (lang = $pivot) DESC, -coalesce(error_share_on_pivot_right - pivot_right_rate, -2), lang
