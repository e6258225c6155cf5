-- query: cases_count -- how many of a run's cases pass the filters of a `laya-cases serve` cases page
-- spec: S4.4 (the case records), S4.1 (slice keys: language, model, tag, qid), S2.9 (correct)
-- grain: one row
-- input: cases
-- params: run_id, language, model, tag, qid, outcome, min_confidence, max_confidence (as cases_page.sql)
-- output: n
SELECT count(*) AS n
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
