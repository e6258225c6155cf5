-- query: cases_page -- one page of a run's cases for `laya-cases serve`: filtered, searched, sorted
-- spec: S4.4 (the case records), S4.1 (slice keys: language, model, tag, qid), S2.9 (correct)
-- grain: one row per case, at most $limit, after the keyset ($after_row, $after_qid) in row order, or
--        from $offset in any other order
-- input: cases, runs, inputs
-- params: run_id, language, model, tag, qid, answer_type, outcome, min_confidence, max_confidence, q, sort, descending, after_row, after_qid, offset, limit
--         (every filter null = not applied; outcome: correct, incorrect or unscored; q: a case-insensitive
--         substring of the case's text; sort: row, confidence, predicted, qid or language; after_row and
--         limit null: every filtered case, which is how the page's total is counted, sql.count)
-- output: row_index, qid, language_key, model_key, tags, answer_type, expected_json, predicted,
--         confidence, correct
-- why: the searched text is one expression (the contains() below): the state of the dataset row the case
--      came from (store/inputs.py; not its questions, whose options every row shares), the gold, the
--      prediction and the raw answer; every order
--      ends in (row_index, qid), so pages are deterministic, and a null confidence sorts last either way
WITH hits AS (
    SELECT c.row_index, c.qid, c.language_key, c.model_key, c.tags, c.answer_type, c.expected_json,
           c.predicted, c.confidence, c.correct
    FROM cases c
    LEFT JOIN runs r ON $q::VARCHAR IS NOT NULL AND r.run_id = c.run_id
    LEFT JOIN inputs i ON $q::VARCHAR IS NOT NULL AND i.labelled_rows_sha256 = r.labelled_rows_sha256
                          AND i.row_index = c.row_index
    WHERE c.run_id = $run_id
      AND ($language::VARCHAR IS NULL OR c.language_key = $language::VARCHAR)
      AND ($model::VARCHAR IS NULL OR c.model_key = $model::VARCHAR)
      AND ($tag::VARCHAR IS NULL OR list_contains(c.tags, $tag::VARCHAR))
      AND ($qid::VARCHAR IS NULL OR c.qid = $qid::VARCHAR)
      AND ($answer_type::VARCHAR IS NULL OR c.answer_type = $answer_type::VARCHAR)
      AND ($outcome::VARCHAR IS NULL OR ($outcome::VARCHAR = 'correct' AND c.correct)
           OR ($outcome::VARCHAR = 'incorrect' AND NOT c.correct)
           OR ($outcome::VARCHAR = 'unscored' AND c.correct IS NULL))
      AND ($min_confidence::DOUBLE IS NULL OR c.confidence >= $min_confidence::DOUBLE)
      AND ($max_confidence::DOUBLE IS NULL OR c.confidence <= $max_confidence::DOUBLE)
      AND ($q::VARCHAR IS NULL OR contains(lower(concat_ws(' ', json_extract_string(i.row_json, '$.state'),
                                                           c.expected_json, c.predicted,
                                                           c.answer_json)), lower($q::VARCHAR)))
      AND ($after_row::BIGINT IS NULL OR c.row_index > $after_row::BIGINT
           OR (c.row_index = $after_row::BIGINT AND c.qid > $after_qid::VARCHAR))
)
SELECT * FROM hits
ORDER BY
    CASE WHEN $descending::BOOLEAN THEN NULL ELSE
        CASE $sort::VARCHAR WHEN 'confidence' THEN confidence END END ASC NULLS LAST,
    CASE WHEN $descending::BOOLEAN THEN
        CASE $sort::VARCHAR WHEN 'confidence' THEN confidence END END DESC NULLS LAST,
    CASE WHEN $descending::BOOLEAN THEN NULL ELSE
        CASE $sort::VARCHAR WHEN 'predicted' THEN predicted WHEN 'qid' THEN qid
                            WHEN 'language' THEN language_key END END ASC NULLS LAST,
    CASE WHEN $descending::BOOLEAN THEN
        CASE $sort::VARCHAR WHEN 'predicted' THEN predicted WHEN 'qid' THEN qid
                            WHEN 'language' THEN language_key END END DESC NULLS LAST,
    CASE WHEN $descending::BOOLEAN AND $sort::VARCHAR = 'row' THEN row_index END DESC,
    row_index, qid
LIMIT $limit::BIGINT OFFSET coalesce($offset::BIGINT, 0)
