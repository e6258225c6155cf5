-- table: calib_applied -- every usable case of calib_scores twice: as stored (before) and recalibrated (after)
-- spec: S7.4 (softmax(z / T) with max-subtraction; temperature never moves the argmax), S2.4 (noul:
--       confidence = max(p, 1 - p), true when p >= 0.5), S2.9 (correct)
-- grain: one row per (phase, usable case); phase 'before' (T = 1) and 'after' (the case's fitted parameters)
-- input: calib_scores, calib_params (bucket, answer_type, temperature, platt_a, platt_b: one row per
--        (bucket, answer_type) of the run being scored, written by laya_cases/report/calibration.py)
-- params: none
-- output: phase, case_id, bucket, answer_type, options, gold, probs, conf, correct, nll
-- why: the fit only chooses numbers; what they do to the run is SQL, the same for both phases. A
--      temperature keeps every prediction, so `correct` stays the stored one; Platt scaling of a noul
--      answer, q = 1 / (1 + exp(-(a * s + b))) with s = ln P(true) - ln P(false), moves the 0.5 cut, so
--      its correctness is decided again on q. nll = -ln P(gold) in log space (logsumexp(z) - z_gold; for
--      Platt the softplus of the signed margin), so a sharp wrong case costs a large finite loss, never
--      ln(0) of an underflowed probability.
WITH u AS (
    SELECT s.*, p.temperature, p.platt_a, p.platt_b
    FROM calib_scores s
    JOIN calib_params p ON p.bucket = s.bucket AND p.answer_type = s.answer_type
    WHERE s.usable
), phases AS (
    SELECT 'before' AS phase, case_id, bucket, answer_type, options, gold, logp, correct,
           CAST(1.0 AS DOUBLE) AS t, CAST(NULL AS DOUBLE) AS a, CAST(NULL AS DOUBLE) AS b
    FROM u
    UNION ALL
    SELECT 'after', case_id, bucket, answer_type, options, gold, logp, correct, temperature, platt_a, platt_b
    FROM u
), z AS (
    SELECT *, list_transform(logp, lambda x: x / t) AS zs,
           a * (logp[2] - logp[1]) + b AS m,
           1.0 / (1.0 + exp(-(a * (logp[2] - logp[1]) + b))) AS q
    FROM phases
), p AS (
    SELECT phase, case_id, bucket, answer_type, options, gold, correct, q,
           CASE WHEN q IS NOT NULL THEN [1.0 - q, q]
                ELSE list_transform(zs, lambda x: exp(x - list_max(zs)) / list_sum(list_transform(zs, lambda y: exp(y - list_max(zs)))))
           END AS probs,
           CASE WHEN q IS NOT NULL
                THEN greatest(CASE WHEN gold = 1 THEN -m ELSE m END, 0.0) + ln(1.0 + exp(-abs(m)))
                ELSE ln(list_sum(list_transform(zs, lambda x: exp(x - list_max(zs))))) + list_max(zs) - zs[gold + 1]
           END AS nll
    FROM z
)
SELECT phase, case_id, bucket, answer_type, options, gold, probs,
       CASE WHEN q IS NOT NULL THEN greatest(q, 1.0 - q) ELSE list_max(probs) END AS conf,
       CASE WHEN q IS NOT NULL THEN (q >= 0.5) = (gold = 1) ELSE correct END AS correct,
       nll
FROM p
