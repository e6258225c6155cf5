-- table: massive_cases -- one run's MASSIVE decisions as the harness reads them, per language in case order
-- spec: S7.4 (pred = first index of the maximum, gold_index = position of the gold key in the
--       presented options; both are option slot indices), S7.7 (per-case record)
-- grain: one row per case of the run that has a language
-- input: cases (view over the warehouse)
-- params: run_id
-- output: lang, pos, row_index, item_id, conf, correct, gold_index, pred_index, temperature, cost_ms
-- why: the per-language metrics (languages.sql) read this table only, so hand-made rows (T7.2) go
--      through exactly the SQL a run goes through. pos is the case's 0-based position in its
--      language (row order), the "case order" that breaks confidence ties at the floor cut.
--      cost_ms is the call's wall time split over its chunk (the language's share of the run time).
SELECT language_key AS lang,
       CAST(row_number() OVER (PARTITION BY language_key ORDER BY row_index, qid_pos) - 1 AS BIGINT) AS pos,
       row_index, item_id, confidence AS conf,
       CAST(correct AS INTEGER) AS correct,
       CAST(list_position(options, json_extract_string(expected_json, '$')) - 1 AS BIGINT) AS gold_index,
       CAST(list_position(options, predicted) - 1 AS BIGINT) AS pred_index,
       temperature,
       call_ms / CAST(chunk_size AS DOUBLE) AS cost_ms
FROM cases
WHERE run_id = $run_id AND language_key IS NOT NULL AND question_type = 'choice'
