-- table: rel_items -- one relevance item of a run: gold, the saved scores and the original verdict
-- spec: S8.1 (positive class = yes), S8.3 (an unparsed generation has no verdict), S8.5 (original verdict =
--       argmax of the normalised yes/no scores, a tie goes to no)
-- grain: one row per case of question `relevant` in the runs of rel_runs
-- input: cases, rel_runs
-- params: none
-- output: run_id, model_id, language, mode, item_id (<language>/<source_item_id>), source_item_id, row_index, position (0-based item order of the run,
--         the bootstrap stream position), gold, yes_score, no_score, native_score, verdict (NULL = unparsed),
--         truncated
SELECT c.run_id, r.model_id, r.language, r.mode, c.item_id, c.source_item_id, c.row_index,
       row_number() OVER (PARTITION BY c.run_id ORDER BY c.row_index) - 1 AS position,
       c.expected_json = 'true' AS gold,
       c.relevance_score AS yes_score, c.no_score, c.native_score,
       CASE WHEN r.mode = 'scoring' THEN
                CASE WHEN c.relevance_score IS NOT NULL
                     THEN c.relevance_score > coalesce(c.no_score, 1.0 - c.relevance_score) END
            WHEN c.answer_type = 'noul' AND c.noul_p IS NOT NULL THEN c.noul_p >= 0.5
       END AS verdict,
       coalesce(c.truncated, false) AS truncated
FROM cases c JOIN rel_runs r USING (run_id)
WHERE c.qid = 'relevant'
