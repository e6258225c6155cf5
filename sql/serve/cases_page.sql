-- query: cases_page -- one page of a run's cases for `laya-cases serve`, filtered, in (row, qid) order
-- spec: S4.4 (the case records), S4.1 (slice keys: language, model, tag, qid), S2.9 (correct)
-- grain: one row per case, at most $limit, after the keyset ($after_row, $after_qid)
-- input: cases
-- params: run_id, language, model, tag, qid, outcome, min_confidence, max_confidence, after_row, after_qid, limit
--         (every filter null = not applied; outcome: correct, incorrect or unscored; after_row and limit
--         null: every filtered case, which is how the page's total is counted, sql.count)
-- output: row_index, qid, language_key, model_key, tags, answer_type, expected_json, predicted,
--         confidence, correct
SELECT row_index, qid, language_key, model_key, tags, answer_type, expected_json, predicted, confidence, correct
FROM cases
WHERE run_id = $run_id
  AND ($language::VARCHAR IS NULL OR language_key = $language::VARCHAR)
  AND ($model::VARCHAR IS NULL OR model_key = $model::VARCHAR)
  AND ($tag::VARCHAR IS NULL OR list_contains(tags, $tag::VARCHAR))
  AND ($qid::VARCHAR IS NULL OR qid = $qid::VARCHAR)
  AND ($outcome::VARCHAR IS NULL OR ($outcome::VARCHAR = 'correct' AND correct)
       OR ($outcome::VARCHAR = 'incorrect' AND NOT correct) OR ($outcome::VARCHAR = 'unscored' AND correct IS NULL))
  AND ($min_confidence::DOUBLE IS NULL OR confidence >= $min_confidence::DOUBLE)
  AND ($max_confidence::DOUBLE IS NULL OR confidence <= $max_confidence::DOUBLE)
  AND ($after_row::BIGINT IS NULL OR row_index > $after_row::BIGINT
       OR (row_index = $after_row::BIGINT AND qid > $after_qid::VARCHAR))
ORDER BY row_index, qid
LIMIT $limit::BIGINT
