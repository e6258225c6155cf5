-- macro: lc_lm_alike(line), lc_lm_decimal(text), lc_lm_float(v), lc_lm_gold(t, choices), lc_lm_item(v), lc_lm_language(v), lc_lm_doc_language(doc), lc_lm_question(task, qid, language), lc_lm_tags(task, filter), lc_lm_numbers(v), lc_lm_brier_ok(q, p) -- lm-eval log values as lmeval_rows.py reads them
-- spec: S9 (an import reads a log as its per-row reader does), docs/imports.md "lm-eval"
-- why: sql/imports/lmeval_lines.sql reads a samples file column-wise; each macro gives a value as
--      laya_cases/imports/lmeval_rows.py does, or null where that reader could read it otherwise (float() of an
--      unusual text, str() of a float): the line then makes the run go row by row.
-- params: none

-- whether json.loads reads a samples line as DuckDB does: DuckDB reads a trailing comma, json.loads refuses
-- it (such a line is left to Python's reader, lc_loads_ok). A line DuckDB cannot parse fails the query.
CREATE OR REPLACE MACRO lc_lm_alike(line) AS
    NOT regexp_matches(line, ',[ \t]*[\]}]') OR lc_loads_ok(line);

-- float() of a text, for a plain decimal number only (null: a text float() could read otherwise)
CREATE OR REPLACE MACRO lc_lm_decimal(text) AS
    CASE WHEN regexp_full_match(text, '[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?')
         THEN TRY_CAST(text AS DOUBLE) END;

-- float() of a log-likelihood text (sanitize_list writes every leaf as a str)
CREATE OR REPLACE MACRO lc_lm_float(v) AS
    CASE WHEN json_type(v) = 'VARCHAR' THEN lc_lm_decimal(v ->> '$') END;

-- _gold of one target: a choice text (its first place), an index's digits, an index, or a letter, as a
-- 1-based option position
CREATE OR REPLACE MACRO lc_lm_gold(t, choices) AS
    CASE json_type(t)
        WHEN 'VARCHAR' THEN coalesce(
            nullif(list_position(choices, t ->> '$'), 0),
            CASE WHEN regexp_full_match(t ->> '$', '[0-9]{1,18}') AND CAST(t ->> '$' AS BIGINT) < len(choices)
                 THEN CAST(t ->> '$' AS BIGINT) + 1 END,
            CASE WHEN regexp_full_match(t ->> '$', '[A-Z]') AND ascii(t ->> '$') - 65 < len(choices)
                 THEN ascii(t ->> '$') - 64 END)
        WHEN 'UBIGINT' THEN CASE WHEN TRY_CAST(t AS BIGINT) < len(choices) THEN TRY_CAST(t AS BIGINT) + 1 END
    END;

-- str() of an item id: a string, or an integer of at most 15 digits (DuckDB keeps its text)
CREATE OR REPLACE MACRO lc_lm_item(v) AS
    CASE WHEN json_type(v) = 'VARCHAR' THEN v ->> '$'
         WHEN json_type(v) IN ('BIGINT', 'UBIGINT') AND regexp_full_match(CAST(v AS VARCHAR), '0|-?[1-9][0-9]{0,14}')
         THEN CAST(v AS VARCHAR) END;

-- a doc's language field: a non-empty string
CREATE OR REPLACE MACRO lc_lm_language(v) AS
    CASE WHEN json_type(v) = 'VARCHAR' AND v ->> '$' <> '' THEN v ->> '$' END;

-- the doc's own language (Task.row_language): its language, lang or locale field, the first that is one
CREATE OR REPLACE MACRO lc_lm_doc_language(doc) AS
    coalesce(lc_lm_language(doc['language']), lc_lm_language(doc['lang']), lc_lm_language(doc['locale']));

-- the question id: the task name less `_<the doc's language>` where it ends so, else the task's own qid
CREATE OR REPLACE MACRO lc_lm_question(task, qid, language) AS
    CASE WHEN ends_with(task, '_' || language) THEN left(task, length(task) - length(language) - 1) ELSE qid END;

-- the row's tags: the task, and the filter's name unless it is `none`
CREATE OR REPLACE MACRO lc_lm_tags(task, filter) AS
    CASE WHEN filter IS NULL OR filter ->> '$' = 'none' THEN [task] ELSE [task, filter ->> '$'] END;

-- the numbers of lm-eval's per-doc brier_score text ("[p0 p1 ...]", numpy's 8 digits), as
-- `text.strip("[] \n").split()` and float() read them (null: a text they could read otherwise)
CREATE OR REPLACE MACRO lc_lm_numbers(v) AS
    CASE WHEN json_type(v) = 'VARCHAR'
         THEN list_transform(string_split_regex(trim(v ->> '$', '[] ' || chr(10)), '[ \n]+'),
                             lambda q: lc_lm_decimal(q)) END;

-- lm-eval's logged probabilities q against ours p: one per option, each within _check's tolerance
CREATE OR REPLACE MACRO lc_lm_brier_ok(q, p) AS
    coalesce(len(q) = len(p) AND list_bool_and(list_transform(list_zip(p, q),
        lambda x: x[2] IS NOT NULL AND NOT abs(x[1] - x[2]) > 1e-7 + 1e-6 * abs(x[2]))), false);
