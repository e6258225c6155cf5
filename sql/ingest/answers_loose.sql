-- query: answers_loose -- a block of answers lines, whatever their spelling, as decision rows
-- spec: S1.1, S1.4 (the row checks), S2.4 (answer shape), S2.6 (temperature bucket), S2.7 (confidence),
--       S2.8 (gate confidence), S2.9 (correctness), S3.6 (score error), S4.1 (group keys)
-- grain: one row per (line, expected question), in line order and the row's `expected` order (DuckDB keeps
--        its input's order: record/ingest/loose.py checks it)
-- input: lines(pos, line): braced lines of one block of an answers file (record/ingest/bulk.py);
--        the Python functions lc_body_facts (a question body's number in the block and its options; its
--        text and facts, record/decisions.py body_facts, stay in Python), lc_json_texts (json.dumps and
--        compact text of a JSON text) and
--        lc_questions_compact (the compact text of a `questions` object); macros sql/ingest/json_values.sql
-- params: none
-- output: pos, qid_pos, qid, case_ok (false: the line goes through the per-row path), body_id, the line's
--         state_text (the case digest's state text), labelled (its labelled compact text) and row columns
--         on its first case, then the decision columns of record/decisions.py add_case under their names
-- why: DuckDB parses every line once; each stored JSON text is DuckDB's minified text with json.dumps's
--      separators where that is exact (lc_json_plain, lc_json_spaced), else Python's json.dumps of that
--      text (lc_json_texts: the minified text parses to the same value as the line's, key order and
--      duplicates kept). A line holding anything the per-row path reads differently, or refuses, has a
--      case with case_ok false, and the per-row path reads it (and names its error).
WITH parsed AS (
    -- a map is null where its object repeats a key or is not an object: json.loads reads those otherwise
    -- (`questions` as DuckDB's text too: its compact text is that of each distinct one)
    SELECT pos, top, j, from_json(j.questions, '"MAP(VARCHAR, JSON)"') AS qmap,
           -- `row.model or None`: an empty string or a zero is no model
           j.model <> '""' AND coalesce(lc_json_number(j.model) <> 0, true) AS model_given,
           -- (a Python function's call written once: DuckDB evaluates a repeated expression on every row)
           -- (a flat state's texts are DuckDB's: lc_json_flat; any other goes through Python)
           CASE WHEN lc_json_token(j.state) IS NOT NULL THEN NULL
                WHEN lc_json_flat(j.state) THEN {'canonical': lc_json_spaced(j.state), 'compact': CAST(j.state AS VARCHAR)}
                ELSE lc_json_texts(j.state) END AS state_texts
    FROM (SELECT pos, json_keys(line) AS top,     -- (from_json: a JSON null is NULL, as an absent key is)
                 from_json(line, '{"state": "JSON", "questions": "JSON", "expected": "MAP(VARCHAR, JSON)",
                                   "answers": "MAP(VARCHAR, JSON)", "language": "JSON", "model": "JSON",
                                   "tags": "JSON", "item_id": "JSON", "source_item_id": "JSON",
                                   "latency_ms": "JSON"}') AS j
          FROM lines)
), row_facts AS (
    SELECT pos, qmap AS questions, j.expected AS expected, j.answers AS answers,
           -- (a JSON null comes out of from_json as NULL, in a struct, map or list alike)
           -- what check_row, _record_row and _row_facts read, as they read it (list_bool_and skips nulls)
           len(list_distinct(top)) = len(top) AND list_contains(top, 'state')
           AND cardinality(j.expected) > 0 AND list_has_all(map_keys(qmap), map_keys(j.expected))
           AND j.answers IS NOT NULL
           AND (j.tags IS NULL
                OR (json_type(j.tags) = 'ARRAY' AND coalesce(list_bool_and(list_transform(
                        from_json(j.tags, '["JSON"]'), lambda t: coalesce(json_type(t) = 'VARCHAR', false))), true)))
           AND (j.latency_ms IS NULL OR (lc_json_exact(j.latency_ms) AND lc_json_number(j.latency_ms) >= 0))
           AND (j.language IS NULL OR isfinite(lc_json_number(j.language))
                OR (json_type(j.language) = 'VARCHAR' AND lc_json_token(j.language) IS NOT NULL))
           AND (j.model IS NULL OR isfinite(lc_json_number(j.model))
                OR (json_type(j.model) = 'VARCHAR' AND lc_json_token(j.model) IS NOT NULL))
           AND (j.item_id IS NULL OR json_type(j.item_id) = 'VARCHAR' OR isfinite(lc_json_number(j.item_id)))
           AND (j.source_item_id IS NULL OR json_type(j.source_item_id) = 'VARCHAR'
                OR isfinite(lc_json_number(j.source_item_id))) AS row_ok,
           CASE WHEN j.state IS NULL THEN 'null' ELSE coalesce(lc_json_token(j.state), state_texts.canonical) END
               AS state_text,
           -- (a piece that is null makes the line null: it goes through the per-row path)
           '{"state":' || CASE WHEN j.state IS NULL THEN 'null' ELSE coalesce(lc_json_token(j.state), state_texts.compact) END
             || ',"questions":' || lc_questions_compact(CAST(j.questions AS VARCHAR))
             || ',"expected":' || CASE WHEN lc_json_plain(CAST(to_json(j.expected) AS VARCHAR))
                                            AND NOT list_bool_or(list_transform(map_values(j.expected),
                                                                                lambda v: json_type(v) IN ('OBJECT', 'ARRAY')))
                                       THEN CAST(to_json(j.expected) AS VARCHAR)
                                       ELSE lc_json_texts(to_json(j.expected)).compact END
             || CASE WHEN list_contains(top, 'language') THEN ',"language":' || coalesce(lc_json_token(j.language), 'null') ELSE '' END
             || CASE WHEN NOT list_contains(top, 'tags') THEN '' WHEN j.tags IS NULL THEN ',"tags":null'
                     WHEN lc_json_plain(j.tags) THEN ',"tags":' || j.tags ELSE ',"tags":' || lc_json_texts(j.tags).compact END
             || CASE WHEN list_contains(top, 'model') THEN ',"model":' || coalesce(lc_json_token(j.model), 'null') ELSE '' END
             || '}' AS labelled,
           lc_json_token(j.language) AS language,
           lc_json_str(j.language) AS language_key,
           CASE WHEN model_given THEN lc_json_token(j.model) END AS model,
           CASE WHEN model_given THEN lc_json_str(j.model) END AS model_key,
           CASE WHEN json_type(j.tags) = 'ARRAY' THEN from_json(j.tags, '["VARCHAR"]') ELSE [] END AS tags,
           lc_json_str(j.item_id) AS item_id, lc_json_str(j.source_item_id) AS source_item_id,
           lc_json_number(j.latency_ms) AS call_ms
    FROM parsed
), cases AS (
    SELECT *, unnest(map_keys(expected)) AS qid, generate_subscripts(map_keys(expected), 1) - 1 AS qid_pos
    FROM row_facts
), answered AS (
    SELECT *, expected[qid] AS label, lc_body_facts(questions[qid]) AS body,
           from_json(answers[qid], '"MAP(VARCHAR, JSON)"') AS a, CAST(answers[qid] AS VARCHAR) AS answer
    FROM cases
), fields AS (
    SELECT *,
           a['type'] ->> '$' AS kind,
           CASE WHEN json_type(a['noul']) = 'BOOLEAN' THEN CASE WHEN a['noul'] = 'true' THEN 1.0 ELSE 0.0 END
                ELSE coalesce(lc_json_number(a['noul']), 0.0) END AS p,
           CASE WHEN json_type(a['probabilities']) = 'OBJECT'
                THEN from_json(a['probabilities'], '"MAP(VARCHAR, JSON)"') END AS probs,
           lc_json_number(a['answer_confidence']) AS ac, lc_json_number(a['confidence']) AS cf,
           lc_json_number(a['noul']) AS noul_number, lc_json_number(a['score']) AS score_number,
           lc_json_number(label) AS label_number
    FROM answered
), judged AS (
    SELECT *,
           -- what add_case reads without an error, and reads as this query does
           row_ok AND a IS NOT NULL
           AND (a['type'] IS NULL OR json_type(a['type']) = 'VARCHAR')
           -- (a map's JSON null is NULL, as an absent key's value is: a null noul or score is refused there)
           AND (NOT map_contains(a, 'noul') OR json_type(a['noul']) = 'BOOLEAN'
                OR lc_json_exact_number(a['noul'], noul_number))
           AND (NOT map_contains(a, 'score') OR lc_json_exact_number(a['score'], score_number))
           AND (a['choice'] IS NULL OR json_type(a['choice']) = 'VARCHAR' OR isfinite(lc_json_number(a['choice'])))
           AND (ac IS NULL OR lc_json_exact_number(a['answer_confidence'], ac))
           AND (cf IS NULL OR lc_json_exact_number(a['confidence'], cf))
           AND (a['probabilities'] IS NULL OR (probs IS NOT NULL
                    AND coalesce(list_bool_and(list_transform(map_values(probs), lambda v: coalesce(lc_json_exact(v), false))), true)))
           AND (label_number IS NULL OR lc_json_exact_number(label, label_number)) AS case_ok,
           cardinality(probs) > 0 AS has_probs
    FROM fields
)
SELECT pos, qid_pos, qid, coalesce(case_ok, false) AS case_ok, body.id AS body_id,
       -- the line's own values on its first case only (Arrow spreads them: fewer values to hand over)
       CASE WHEN qid_pos = 0 THEN state_text END AS state_text, CASE WHEN qid_pos = 0 THEN labelled END AS labelled,
       CASE WHEN qid_pos = 0 THEN language END AS language, CASE WHEN qid_pos = 0 THEN language_key END AS language_key,
       CASE WHEN qid_pos = 0 THEN model END AS model, CASE WHEN qid_pos = 0 THEN model_key END AS model_key,
       CASE WHEN qid_pos = 0 THEN tags END AS tags, CASE WHEN qid_pos = 0 THEN item_id END AS item_id,
       CASE WHEN qid_pos = 0 THEN source_item_id END AS source_item_id,
       CASE WHEN qid_pos = 0 THEN call_ms END AS call_ms,
       CASE WHEN label IS NULL THEN 'null' ELSE coalesce(lc_json_token(label), lc_json_texts(label).canonical) END
           AS expected_json,
       CASE WHEN label IS NULL THEN 'null'
            ELSE CASE json_type(label) WHEN 'BOOLEAN' THEN 'bool' WHEN 'VARCHAR' THEN 'string' WHEN 'BIGINT' THEN 'number'
                                       WHEN 'UBIGINT' THEN 'number' WHEN 'DOUBLE' THEN 'number' ELSE 'other' END
       END AS expected_kind,
       kind AS answer_type,
       -- DuckDB's text where no object in it may repeat a key: the answer's own (a is null then) and its
       -- probabilities (probs is) are checked; any other '{', even in a string, sends the text to Python
       coalesce(CASE WHEN lc_json_plain(answer)
                          AND length(answer) - length(replace(answer, '{', '')) = CASE WHEN probs IS NULL THEN 1 ELSE 2 END
                     THEN lc_json_spaced(answer) END, lc_json_texts(answer).canonical) AS answer_json,
       CASE kind WHEN 'choice' THEN CASE WHEN json_type(a['choice']) = 'VARCHAR' THEN a['choice'] ->> '$'
                                         ELSE lc_json_token(a['choice']) END
                 WHEN 'noul' THEN CASE WHEN p >= 0.5 THEN 'true' ELSE 'false' END
                 WHEN 'score' THEN CAST(score_number AS VARCHAR) END AS predicted,
       CASE WHEN has_probs THEN list_transform(body.options, lambda o: lc_json_number(probs[o])) END AS probabilities,
       noul_number AS noul_p, score_number AS score_value,
       ac AS answer_confidence, cf AS confidence_field,
       -- Python's max(): the first of equal values (0.0 before -0.0)
       coalesce(ac, cf, CASE WHEN kind = 'noul' THEN CASE WHEN 1.0 - p > p THEN 1.0 - p ELSE p END END,
                CASE WHEN has_probs THEN list_reduce(list_transform(map_values(probs), lambda v: lc_json_number(v)),
                                                     lambda x, y: CASE WHEN y > x THEN y ELSE x END) END)
           AS confidence,
       CASE WHEN ac IS NOT NULL THEN 'answer_confidence' WHEN cf IS NOT NULL THEN 'confidence'
            WHEN kind = 'noul' THEN 'noul' WHEN has_probs THEN 'probabilities' END AS confidence_source,
       coalesce(ac, cf) AS gate_confidence,
       CASE WHEN kind = 'choice' AND json_type(label) = 'VARCHAR'
                 THEN coalesce(json_type(a['choice']) = 'VARCHAR' AND a['choice'] ->> '$' = label ->> '$', false)
            WHEN kind = 'noul' AND json_type(label) = 'BOOLEAN' THEN (p >= 0.5) = (label = 'true') END AS correct,
       CASE WHEN kind = 'score' AND label_number IS NOT NULL
            THEN abs(coalesce(score_number, 0.0) - label_number) END AS score_mae,
       CASE WHEN json_type(a['abstention']) = 'VARCHAR' THEN a['abstention'] ->> '$' END AS abstention,
       CASE WHEN kind IN ('choice', 'score', 'noul') AND len(body.options) > 0
            THEN CASE WHEN kind = 'noul' THEN 'noul:2'
                      ELSE kind || ':' || CASE WHEN len(body.options) <= 2 THEN '2' WHEN len(body.options) <= 5 THEN '3-5'
                                               WHEN len(body.options) <= 10 THEN '6-10' ELSE '11+' END END
       END AS temperature_bucket
FROM judged
