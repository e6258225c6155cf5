-- query: lmeval_lines -- one block of an lm-eval multiple-choice samples file, as answers-file lines
-- spec: S2.4 (a choice answer's probabilities), S9 (an import: lm-eval's own per-doc metric is checked);
--       docs/imports.md "lm-eval" (the rules, as laya_cases/imports/lmeval_rows.py choice_row applies them)
-- grain: one row per non-blank line of the block, in line order (DuckDB keeps an Arrow scan's order
--        without a sort of the long rows: laya_cases/imports/lmeval_columns.py checks it)
-- input: lines(line_no, line): physical lines of a samples_<task>_<date>.jsonl (laya_cases/imports/lmeval_columns.py);
--        the Python function lc_loads_ok (through lc_lm_alike: whether json.loads reads a line as DuckDB does);
--        macros sql/imports/lmeval_values.sql and sql/ingest/json_values.sql (lc_json_number)
-- params: task, qid, language, delimiter, norm, metric, item_field
-- output: line_no, ok (false: this line is not read here alike, so the run is imported row by row, which also
--         names any error), answers (the row as an answers-file line: state, questions, expected, tags,
--         item_id, language, answers), logits (the log-likelihoods, the decision's `logits`)
-- why: `ingest`'s column-wise reader reads the answers lines (record/ingest/bulk.py), so an import and an
--      ingest share one definition of every decision column. Floats are written by DuckDB's to_json, which
--      round-trips every double; each value the line holds parses to what choice_row builds, key order
--      included. Anything outside that (a value choice_row reads through str(), float() of an unusual text,
--      a repeated key) makes `ok` false rather than a guess.
WITH parsed AS (
    -- each line parsed once; its keys tell a repeated key (json.loads keeps the last, DuckDB the first) and
    -- which keys are present (lc_lm_alike: a line json.loads reads otherwise is not parsed here; a line DuckDB
    -- cannot parse, a lone surrogate escape that json.loads reads, fails the query: the run goes row by row)
    SELECT line_no, CASE WHEN j IS NOT NULL THEN json_keys(line) END AS top, j,
           from_json(j.doc, '"MAP(VARCHAR, JSON)"') AS doc,
           -- arguments: {"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}, or [[context, continuation]]
           CASE json_type(j.arguments) WHEN 'OBJECT' THEN from_json(j.arguments, '"MAP(VARCHAR, STRUCT(arg_1 JSON))"') END
               AS arg_map,
           CASE json_type(j.arguments) WHEN 'ARRAY' THEN from_json(j.arguments, '[["JSON"]]') END AS arg_list
    FROM (SELECT line_no, line,
                 CASE WHEN lc_lm_alike(line)
                      THEN from_json(line, '{"doc_id": "JSON", "doc": "JSON", "target": "JSON", "filter": "JSON",
                                                 "arguments": "JSON", "filtered_resps": [["JSON"]], "acc": "JSON",
                                                 "acc_norm": "JSON", "acc_bytes": "JSON", "brier_score": "JSON"}') END AS j
          FROM lines
          WHERE NOT regexp_full_match(line, '[ \t]*'))      -- blank lines are skipped, as lmeval.py's reader skips them
), fields AS (
    SELECT line_no, top, j, doc, arg_map, arg_list,
           list_transform(j.filtered_resps, lambda r: lc_lm_float(r[1])) AS all_lls,
           -- the continuations in gen_args order; each object holds one arg_1 (a repeated key would be read
           -- otherwise; `"arg_1":` cannot occur inside a string of DuckDB's text)
           CASE WHEN arg_map IS NOT NULL
                     AND (strlen(j.arguments) - strlen(replace(j.arguments, '"arg_1":', ''))) // 8 = cardinality(arg_map)
                THEN list_transform(
                    list_sort(list_transform(map_entries(arg_map), lambda e, i: {
                        'n': CAST(regexp_extract(e.key, '^gen_args_([0-9]{1,9})$', 1) AS BIGINT), 'i': i, 'v': e.value.arg_1})),
                    lambda e: CASE WHEN e.n IS NOT NULL AND json_type(e.v) = 'VARCHAR' THEN e.v ->> '$' END)
                ELSE list_transform(arg_list, lambda r: CASE WHEN json_type(r[2]) = 'VARCHAR' THEN r[2] ->> '$' END)
           END AS all_conts
    FROM parsed
), options AS (
    -- acc_mutual_info: the second half of the requests is the unconditional one, not an option
    SELECT *,
           CASE WHEN list_contains(top, 'acc_mutual_info') AND len(all_lls) = len(all_conts) AND len(all_lls) % 2 = 0
                THEN len(all_lls) // 2 ELSE len(all_lls) END AS n
    FROM fields
), choices AS (
    SELECT *, all_lls[1:n] AS lls,
           list_transform(all_conts[1:n], lambda c: CASE WHEN $delimiter <> '' AND starts_with(c, $delimiter)
                                                         THEN substr(c, length($delimiter) + 1) ELSE c END) AS choices
    FROM options
), scored AS (
    SELECT *,
           -- acc, acc_norm (characters), acc_bytes (UTF-8 bytes): task.py's normalisations
           CASE $norm WHEN 'raw' THEN lls
                      ELSE list_transform(list_zip(lls, choices), lambda x: CASE $norm
               WHEN 'chars' THEN CASE WHEN length(x[2]) > 0 THEN x[1] / length(x[2]) ELSE x[1] END
               ELSE CASE WHEN strlen(x[2]) > 0 THEN x[1] / strlen(x[2]) ELSE x[1] END END) END AS scores,
           CASE WHEN list_unique(choices) = len(choices) AND NOT list_contains(choices, '') THEN choices
                ELSE list_transform(range(len(choices)), lambda i: CAST(i AS VARCHAR)) END AS labels,
           -- target: a choice text, an index (or its digits), a letter, or a list of these (1-based positions)
           CASE json_type(j.target)
               WHEN 'ARRAY' THEN list_transform(from_json(j.target, '["JSON"]'), lambda t: lc_lm_gold(t, choices))
               ELSE [lc_lm_gold(j.target, choices)] END AS gold
    FROM choices
), decided AS (
    -- the first maximum (argmax), and the softmax summed left to right as choice_row's sum does
    SELECT *, list_position(scores, top_score) AS pred,
           list_count(list_filter(scores, lambda s: s = top_score)) = 1 AS untied,
           list_transform(scores, lambda s: exp(s - top_score)) AS exps
    FROM (SELECT *, list_max(scores) AS top_score FROM scored)
), probs AS (
    SELECT *, list_transform(exps, lambda e: e / total) AS p
    FROM (SELECT *, CASE WHEN len(exps) > 0 THEN list_reduce(exps, lambda a, b: a + b) END AS total FROM decided)
), named AS (
    SELECT *,
           lc_lm_doc_language(doc) AS doc_language,          -- else the task name's
           -- the item: doc_id (or the doc's --item-id field), an integer or a string, as its str()
           lc_lm_item(CASE WHEN $item_field IS NULL THEN j.doc_id ELSE doc[$item_field] END) AS item,
           lc_lm_tags($task, j.filter) AS tags,
           -- the metric --norm reproduces: lm-eval's own value must agree where no exact tie decides it
           CASE $metric WHEN 'acc' THEN j.acc WHEN 'acc_norm' THEN j.acc_norm ELSE j.acc_bytes END AS logged,
           -- brier_score (--norm raw): [gold, "<numpy's text of the probabilities>"]
           CASE WHEN $norm <> 'raw' OR NOT list_contains(top, 'brier_score') THEN true
                WHEN json_type(j.brier_score) = 'ARRAY' AND json_array_length(j.brier_score) = 2
                THEN lc_lm_brier_ok(lc_lm_numbers(j.brier_score -> '$[1]'), p)
                ELSE false END AS brier_ok
    FROM probs
), rows AS (
    SELECT *, coalesce(doc_language, $language) AS language, lc_lm_question($task, $qid, doc_language) AS question,
           CASE WHEN json_type(logged) = 'BOOLEAN' THEN false
                WHEN lc_json_number(logged) IS NULL OR NOT untied THEN true
                ELSE lc_json_number(logged) = CASE WHEN list_contains(gold, pred) THEN 1.0 ELSE 0.0 END END AS metric_ok
    FROM named
)
SELECT line_no,
       coalesce(len(top) = len(list_distinct(top)) AND doc IS NOT NULL AND n > 0 AND len(all_conts) = len(all_lls)
                AND list_bool_and(list_transform(all_lls, lambda x: coalesce(isfinite(x), false)))
                AND list_bool_and(list_transform(all_conts, lambda c: c IS NOT NULL))
                AND list_bool_and(list_transform(scores, lambda s: isfinite(s)))
                AND len(gold) > 0 AND list_bool_and(list_transform(gold, lambda g: g IS NOT NULL))
                AND (j.filter IS NULL OR json_type(j.filter) = 'VARCHAR')
                AND item IS NOT NULL AND metric_ok AND brier_ok, false) AS ok,
       '{"state":' || j.doc
       || ',"questions":{' || to_json(question) || ':{"type":"choice","instructions":' || to_json(question)
       || ',"criteria":' || CASE WHEN labels = choices THEN to_json(choices) ELSE to_json(map(labels, choices)) END
       || '}},"expected":{' || to_json(question) || ':'
       || CASE WHEN len(gold) = 1 THEN to_json(labels[gold[1]]) ELSE to_json(list_transform(gold, lambda g: labels[g])) END
       || '},"tags":' || to_json(tags) || ',"item_id":' || to_json(item)
       || CASE WHEN language IS NULL THEN '' ELSE ',"language":' || to_json(language) END
       || ',"answers":{' || to_json(question) || ':{"type":"choice","choice":' || to_json(labels[pred])
       || ',"probabilities":' || to_json(map(labels, p)) || ',"answer_confidence":' || to_json(list_max(p)) || '}}}' AS answers,
       lls AS logits
FROM rows
