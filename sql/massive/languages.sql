-- query: massive_languages -- the per-language block of the MASSIVE harness, unrounded
-- spec: S7.5 (accuracy, macro_f1 over option slot indices, 15-bin ece, mean_confidence, the floor
--       row cut acc_at_50_coverage with ties in case order and its straddle flag, the tie-aware
--       selective_accuracy@50, temperature), S3.10 (the bins), S3.12 and S3.13 (the tie-aware cut)
-- grain: one row per language with cases
-- input: massive_cases
-- params: none
-- output: lang, n, accuracy, macro_f1, ece, mean_confidence, acc_at_50_coverage, acc_at_50_tie_straddle,
--         selective_accuracy_50, selective_accepted, temperature, n_temperatures, seconds
-- why: every number is a plain aggregate of massive_cases; rounding to 4 decimals (Python
--      round-half-even on the binary value) and the summary of S7.6 happen once, in
--      laya_cases/harness/massive/metrics.py. macro_f1: classes are the slot indices that occur as gold or
--      as prediction; a case with no readable prediction counts against its gold class only.
--      S9.8: every sum over doubles (the confidences, the per-class F1 values, the per-case costs) is
--      exactly rounded (lc_exact_sum, lc_exact_mean_w); ECE adds its bin terms in bin order; the
--      accuracies average 0/1 integers (an exact sum). A plain avg()/sum() of doubles adds in thread
--      scheduling order and could change a published digit between two runs of the same store.
WITH c AS (
    SELECT * FROM massive_cases WHERE conf IS NOT NULL AND correct IS NOT NULL
), ranked AS (
    -- the reference ranks by confidence descending; ties kept in case order (the published value)
    SELECT *, row_number() OVER (PARTITION BY lang ORDER BY conf DESC, pos) AS rk,
           count(*) OVER (PARTITION BY lang) AS n_lang
    FROM c
), cut AS (
    SELECT lang, any_value(n_lang) AS n,
           greatest(1, CAST(floor(any_value(n_lang) / 2) AS BIGINT)) AS h,
           greatest(1, CAST(ceil(0.5 * CAST(any_value(n_lang) AS DOUBLE)) AS BIGINT)) AS k
    FROM ranked GROUP BY lang
), floor_cut AS (
    SELECT r.lang, avg(r.correct) FILTER (WHERE r.rk <= cut.h) AS acc_at_50_coverage,
           max(r.conf) FILTER (WHERE r.rk = cut.h) AS level_h,
           max(r.conf) FILTER (WHERE r.rk = cut.k) AS level_k
    FROM ranked r JOIN cut USING (lang) GROUP BY r.lang
), tie_aware AS (
    -- S3.13: the cut extends to the end of the tie group holding the k-th case
    SELECT r.lang,
           count(*) FILTER (WHERE r.conf > f.level_h) < cut.h
             AND count(*) FILTER (WHERE r.conf >= f.level_h) > cut.h AS acc_at_50_tie_straddle,
           avg(r.correct) FILTER (WHERE r.conf >= f.level_k) AS selective_accuracy_50,
           count(*) FILTER (WHERE r.conf >= f.level_k) AS selective_accepted
    FROM ranked r JOIN floor_cut f USING (lang) JOIN cut USING (lang)
    GROUP BY r.lang, cut.h
), classes AS (
    SELECT lang, gold_index AS cls FROM c WHERE gold_index IS NOT NULL
    UNION SELECT lang, pred_index FROM c WHERE pred_index IS NOT NULL
), f1 AS (
    SELECT k.lang, k.cls,
           count(*) FILTER (WHERE c.gold_index = k.cls AND c.pred_index = k.cls) AS tp,
           count(*) FILTER (WHERE c.pred_index = k.cls AND c.gold_index IS DISTINCT FROM k.cls) AS fp,
           count(*) FILTER (WHERE c.gold_index = k.cls AND c.pred_index IS DISTINCT FROM k.cls) AS fn
    FROM classes k JOIN c USING (lang) GROUP BY k.lang, k.cls
), macro AS (
    SELECT lang, lc_exact_mean_w(2.0 * tp / greatest(1, 2 * tp + fp + fn), 1) AS macro_f1 FROM f1 GROUP BY lang
), binned AS (
    -- S3.10: the bin is the count of interior edges i/15 (binary64) strictly below c
    SELECT lang, conf, correct,
           CAST(list_sum([CAST(conf > CAST(i AS DOUBLE) / 15.0 AS INTEGER) FOR i IN range(1, 15)]) AS INTEGER) AS bin
    FROM c WHERE conf >= 0.0 AND conf <= 1.0
), bins AS (
    SELECT lang, bin, count(*) AS n_b, lc_exact_sum(conf) / count(*) AS mean_conf, avg(correct) AS acc
    FROM binned GROUP BY lang, bin
), ece AS (
    SELECT b.lang, sum(CAST(b.n_b AS DOUBLE) / CAST(cut.n AS DOUBLE) * abs(b.mean_conf - b.acc) ORDER BY b.bin) AS ece
    FROM bins b JOIN cut USING (lang) GROUP BY b.lang
), plain AS (
    SELECT lang, count(*) AS n, avg(correct) AS accuracy, lc_exact_sum(conf) / count(*) AS mean_confidence,
           min(temperature) AS temperature, count(DISTINCT temperature) AS n_temperatures,
           lc_exact_sum(cost_ms) / 1000.0 AS seconds
    FROM c GROUP BY lang
)
SELECT p.lang, p.n, p.accuracy, m.macro_f1, coalesce(e.ece, 0.0) AS ece, p.mean_confidence,
       f.acc_at_50_coverage, t.acc_at_50_tie_straddle, t.selective_accuracy_50, t.selective_accepted,
       p.temperature, p.n_temperatures, p.seconds
FROM plain p
LEFT JOIN macro m USING (lang) LEFT JOIN ece e USING (lang) LEFT JOIN floor_cut f USING (lang)
LEFT JOIN tie_aware t USING (lang)
ORDER BY p.lang
