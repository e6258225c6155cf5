-- table: slice_cells -- a robustness run's labelled cases per variant kind, shaped as the report's slice cells
-- spec: S7.16 (quality per kind: accuracy and 15-bin ECE over the labelled cases), S7.14 (correct = the first
--       canonical argmax equals the gold; confidence = max p), S3.10
-- grain: one row per (dim = variant kind, key, distinct confidence, correct); key is 'all' (every language)
--        or 'language=<language key>' ('language=' for rows without a language)
-- input: cases (view over the warehouse)
-- params: run_id, failed (language keys of languages that failed: left out, S7.16)
-- output: dim, key, conf, correct, n
-- why: metrics/reliability.sql and metrics/ece.sql read a table of this shape, so the quality ECE is the
--      report's ECE definition, not a second one; correct is never null here (labelled cases only).
WITH labelled AS (
    SELECT variant, language_key, confidence + 0.0 AS conf, correct
    FROM cases
    WHERE run_id = $run_id AND variant IN ('baseline', 'option_order', 'label_rename') AND correct IS NOT NULL
      AND NOT list_contains($failed::VARCHAR[], coalesce(language_key, ''))
)
SELECT variant AS dim, 'all' AS key, conf, correct, count(*) AS n FROM labelled GROUP BY ALL
UNION ALL
SELECT variant, 'language=' || coalesce(language_key, ''), conf, correct, count(*) FROM labelled GROUP BY ALL
