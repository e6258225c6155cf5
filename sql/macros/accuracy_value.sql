-- macro: lc_accuracy_value(kind, answer_type, correct) -- a case's choice/noul accuracy evaluator value
-- spec: S3.4, S3.5 (1.0 or 0.0 for an answer of that type whose correctness is decided, S2.9; null
--       otherwise), S4.4 (the value a case lists under `scores`)
-- why: the one definition of the per-case rule: the cases listing reads it and the accuracy metrics
--      filter on it, both from the stored correctness (S2.9) and answer type.
-- params: none
CREATE OR REPLACE MACRO lc_accuracy_value(kind, answer_type, correct) AS
    CASE WHEN answer_type = kind AND correct IS NOT NULL THEN CAST(correct AS DOUBLE) END;
