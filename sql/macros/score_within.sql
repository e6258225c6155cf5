-- macro: lc_score_within(err, tolerance) -- the score_within_<tolerance> evaluator of one case
-- spec: S3.7 (1.0 when |score - label| <= tolerance, inclusive; 0.0 otherwise, a NaN error included;
--       null when the case is not a score answer with a numeric label)
-- method: the one definition, read by metrics/score_within.sql (the mean) and report/cases.sql
--         (each case's `scores` entry)
-- params: none
CREATE OR REPLACE MACRO lc_score_within(err, tolerance) AS
    CASE WHEN err IS NULL THEN NULL WHEN err <= tolerance THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END;
