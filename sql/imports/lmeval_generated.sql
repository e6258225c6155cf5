-- query: lmeval_generated -- one block of an lm-eval generate_until samples file, as answers-file lines
-- spec: S2.4 (a noul answer), S9 (an import); docs/imports.md "lm-eval" (the rules, as
--       laya_cases/imports/lmeval_rows.py generated_row applies them)
-- grain: one row per non-blank line of the block, in line order (DuckDB keeps an Arrow scan's order
--        without a sort of the long rows: laya_cases/imports/lmeval_columns.py checks it)
-- input: lines(line_no, line): physical lines of a samples_<task>_<date>.jsonl (laya_cases/imports/lmeval_columns.py);
--        the Python function lc_loads_ok (through lc_lm_alike); macros sql/imports/lmeval_values.sql and sql/ingest/json_values.sql
-- params: task, qid, language, item_field
-- output: line_no, ok (false: the run is imported row by row, which also names any error), answers (the row
--         as an answers-file line), logits (none: a generation has no option)
-- why: the decision is a `noul` whose P(true) is the doc's metric (exact_match if logged, else the first
--      numeric one `metrics` names), gold true; its confidence is set to null on the decision rows after
--      (a generation has none). The metric is written by DuckDB's double -> VARCHAR, which is repr():
--      json.loads reads back the same double, -0.0 included.
WITH parsed AS (
    -- the line as a map: a metric is any key `metrics` names (a repeated key makes the map null)
    SELECT line_no, m, from_json(m['doc'], '"MAP(VARCHAR, JSON)"') AS doc,
           CASE WHEN json_type(m['metrics']) = 'ARRAY' THEN from_json(m['metrics'], '["JSON"]') END AS metrics
    FROM (SELECT line_no,
                 CASE WHEN lc_lm_alike(line)
                      THEN from_json(line, '"MAP(VARCHAR, JSON)"') END AS m
          FROM lines
          WHERE NOT regexp_full_match(line, '[ \t]*'))      -- blank lines are skipped, as lmeval.py's reader skips them
), scored AS (
    SELECT *,
           -- the metrics named (strings) that hold a number (not a boolean)
           list_filter(list_transform(metrics, lambda n: CASE WHEN json_type(n) = 'VARCHAR' THEN n ->> '$' END),
                       lambda n: json_type(m[n]) IN ('BIGINT', 'UBIGINT', 'DOUBLE')) AS numeric,
           -- filtered_resps: [response] (or a bare response); the first one, a string
           CASE json_type(m['filtered_resps'])
               WHEN 'ARRAY' THEN CASE WHEN json_type(m['filtered_resps'], '$[0]') = 'VARCHAR'
                                      THEN m['filtered_resps'] ->> '$[0]' END
               WHEN 'VARCHAR' THEN m['filtered_resps'] ->> '$' END AS response
    FROM parsed
), chosen AS (
    SELECT *, CASE WHEN list_contains(numeric, 'exact_match') THEN 'exact_match' ELSE numeric[1] END AS metric
    FROM scored
), named AS (
    SELECT *, m[metric] AS value,
           lc_lm_doc_language(doc) AS doc_language,
           lc_lm_item(CASE WHEN $item_field IS NULL THEN m['doc_id'] ELSE doc[$item_field] END) AS item,
           lc_lm_tags($task, m['filter']) AS tags
    FROM chosen
), rows AS (
    SELECT *, coalesce(doc_language, $language) AS language, lc_lm_question($task, $qid, doc_language) AS question
    FROM named
)
SELECT line_no,
       coalesce(doc IS NOT NULL
                AND metric IS NOT NULL AND lc_json_exact(value) AND isfinite(lc_json_number(value))
                AND response IS NOT NULL AND (m['filter'] IS NULL OR json_type(m['filter']) = 'VARCHAR')
                AND item IS NOT NULL, false) AS ok,
       '{"state":' || m['doc']
       || ',"questions":{' || to_json(question) || ':{"type":"noul","instructions":' || to_json(question || ' (' || metric || ')')
       || '}},"expected":{' || to_json(question) || ':true},"tags":' || to_json(tags) || ',"item_id":' || to_json(item)
       || CASE WHEN language IS NULL THEN '' ELSE ',"language":' || to_json(language) END
       || ',"answers":{' || to_json(question) || ':{"type":"noul","noul":' || CAST(lc_json_number(value) AS VARCHAR)
       || ',"metric":' || to_json(metric) || ',"response":' || to_json(response) || '}}}' AS answers,
       CAST(NULL AS DOUBLE[]) AS logits
FROM rows
