-- query: lighteval_details -- one lighteval details Parquet, flattened to one row per doc: what a decision needs
-- spec: S2.4 (the options and their scores, in option order), S2.9 (a doc with several golds),
--       S9 (an import: lighteval's own per-doc metrics are kept, so every decision is checked against them)
-- grain: one row per row of the file (one doc of one task), in file order (lighteval's batching order)
-- input: details_<task>|<fewshot>_<date>.parquet as lighteval 0.13 writes it, read_parquet($path):
--        structs doc (a lighteval Doc), metric (metric name -> value), model_response (a ModelResponse)
-- params: path
-- output: row_no (1-based row of the file), task_name, doc_id, query, original_query, choices,
--         gold_json (doc.gold_index: an index or a list), specific_json (doc.specific, the task's own fields),
--         sampling_methods (LOGPROBS, GENERATIVE, ...), metric_json (every per-doc metric),
--         logprobs (one per choice; 2 per choice with PMI, the unconditioned half last),
--         texts (the generations: text_post_processed when lighteval filled it, else text)
-- why: the structs' field sets vary with the task (metric names, doc.specific), so the ones that vary
--      come out as JSON and laya_cases/imports/lighteval.py checks every value's type, naming row and field.
SELECT file_row_number + 1 AS row_no,
       doc.task_name AS task_name,
       doc.id AS doc_id,
       doc.query AS query,
       doc.original_query AS original_query,
       doc.choices AS choices,
       to_json(doc.gold_index) AS gold_json,
       to_json(doc.specific) AS specific_json,
       doc.sampling_methods AS sampling_methods,
       to_json(metric) AS metric_json,
       model_response.logprobs AS logprobs,
       CASE WHEN len(coalesce(CAST(model_response.text_post_processed AS VARCHAR[]), [])) > 0
            THEN CAST(model_response.text_post_processed AS VARCHAR[])
            ELSE CAST(model_response.text AS VARCHAR[]) END AS texts
FROM read_parquet($path, file_row_number = true)
ORDER BY row_no
