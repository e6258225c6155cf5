-- query: audit_queue -- cases whose gold label is most likely wrong: many runs wrong on one other label, confidently
-- spec: S2.9 (correctness), S5.2 (runs of one labelled dataset: case_id joins them); a laya-cases extension
-- grain: one row per case that at least $min_agree runs got wrong with the same predicted label
-- input: stability_case_runs (sql/stability/case_runs.sql: the runs named, case by case)
-- params: min_agree, top (how many runs must agree on the wrong label; how many rows to return at most)
-- output: rank, case_id, row_index, line_no, qid, language_key, expected_json, suggested (the wrong label
--         most runs agree on; ties: the higher mean confidence, then the smaller text), n_runs (runs that
--         scored the case), n_wrong, n_agree (runs predicting the suggested label), agree_share (n_agree /
--         n_runs), n_confident (agreeing runs with a finite confidence), mean_confidence (their mean
--         confidence in the suggested label; null when none), score (agree_share * mean_confidence clipped
--         to [0, 1], 0 without a confidence), agreeing_runs (in the order named)
-- why: a label that many independent models contradict with one voice and high confidence is the likeliest
--      to be wrong; the counts behind each score are in the row so a reviewer can weigh it. Order: score,
--      then more agreeing runs, more runs, then dataset position.
WITH seen AS (               -- a run without the case (absent, failed) has a null correct and predicted
    SELECT * FROM stability_case_runs
),
keys AS (
    SELECT DISTINCT ON (case_id) case_id, row_index, line_no, qid_pos, qid, language_key, expected_json
    FROM seen ORDER BY case_id, run_index
),
counts AS (
    SELECT case_id, count(*) FILTER (WHERE correct IS NOT NULL) AS n_runs,
           count(*) FILTER (WHERE NOT correct) AS n_wrong
    FROM seen GROUP BY case_id
),
votes AS (
    SELECT case_id, predicted, count(*) AS n_agree,
           count(*) FILTER (WHERE isfinite(confidence)) AS n_confident,
           lc_exact_sum(CASE WHEN isfinite(confidence) THEN confidence END) AS confidence_sum,
           list(run_id ORDER BY run_index) AS agreeing_runs
    FROM seen WHERE NOT correct AND predicted IS NOT NULL
    GROUP BY case_id, predicted
),
top AS (
    SELECT DISTINCT ON (case_id) case_id, predicted AS suggested, n_agree, n_confident,
           CASE WHEN n_confident > 0 THEN confidence_sum / n_confident END AS mean_confidence, agreeing_runs
    FROM votes
    ORDER BY case_id, n_agree DESC, CASE WHEN n_confident > 0 THEN confidence_sum / n_confident END DESC NULLS LAST,
             predicted
),
scored AS (
    SELECT k.*, t.suggested, c.n_runs, c.n_wrong, t.n_agree, t.n_agree / c.n_runs AS agree_share, t.n_confident,
           t.mean_confidence,
           t.n_agree / c.n_runs * coalesce(least(1.0, greatest(0.0, t.mean_confidence)), 0.0) AS score,
           t.agreeing_runs
    FROM top t JOIN counts c USING (case_id) JOIN keys k USING (case_id)
    WHERE t.n_agree >= $min_agree
)
SELECT row_number() OVER (ORDER BY score DESC, n_agree DESC, n_runs DESC, row_index, qid_pos, case_id) AS rank,
       case_id, row_index, line_no, qid, language_key, expected_json, suggested, n_runs, n_wrong, n_agree,
       agree_share, n_confident, mean_confidence, score, agreeing_runs
FROM scored
ORDER BY rank
LIMIT $top
