-- table: xl_cases -- one run's labelled decisions keyed by (item, question, language): the cross-lingual grid
-- spec: S7.1 (MASSIVE is parallel: one item_id names the same utterance in every language; issue 9 item 4),
--       S2.9 (correctness); docs/crosslingual.md
-- grain: one row per (item_id, qid, lang) of the run; a (item_id, qid, lang) asked twice keeps its first
--        row in row order
-- input: cases (view over the warehouse)
-- params: run_id
-- output: item_id, qid, lang, row_index, predicted, gold, is_right (0/1)
-- why: every cross-lingual number reads this table only, so a hand-made grid goes through the same SQL
--      as a run. Only labelled cases that carry both an item_id and a language take part (error records
--      are not cases). `is_right` is 1 when the case is correct (S2.9) and 0 otherwise, a null
--      correctness included; `predicted` is the answer's label text.
SELECT item_id, qid, lang, row_index, predicted, gold, is_right
FROM (
    SELECT item_id, qid, language_key AS lang, row_index, predicted,
           json_extract_string(expected_json, '$') AS gold,
           CASE WHEN correct THEN 1 ELSE 0 END AS is_right,
           row_number() OVER (PARTITION BY item_id, qid, language_key ORDER BY row_index, qid_pos) AS nth
    FROM cases
    WHERE run_id = $run_id AND item_id IS NOT NULL AND language_key IS NOT NULL AND qid IS NOT NULL
      AND expected_json IS NOT NULL
)
WHERE nth = 1
