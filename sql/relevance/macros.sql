-- macro: lc_rel_div(a, b), lc_rel_f1(tp, fp, fn), lc_rel_balanced(tp, fn, tn, fp), lc_rel_mcc(tp, fn, tn, fp),
--        lc_rel_wilson_low(k, n), lc_rel_wilson_high(k, n) -- the S8.4 formulas and the S8.9 Wilson interval
-- spec: S8.4 (a zero denominator yields 0.0), S8.9 (Wilson, z = 1.959963984540054)
-- method: every ratio is one IEEE division of exact integer counts (HUGEINT products for MCC's
--         numerator and denominator, then one sqrt); F1 = 2PR/(P + R) from the two ratios, as the
--         reference writes it; balanced accuracy = (recall + specificity)/2 with the zero rule on each
--         term. Wilson: centre (p + z^2/2n)/(1 + z^2/n), half width z*sqrt(p(1-p)/n + z^2/4n^2)/(1 + z^2/n),
--         clipped to [0, 1]; n = 0 gives no interval (NULL).
-- params: none
CREATE OR REPLACE MACRO lc_rel_div(a, b) AS
    CASE WHEN b = 0 THEN CAST(0.0 AS DOUBLE) ELSE CAST(a AS DOUBLE) / CAST(b AS DOUBLE) END;
CREATE OR REPLACE MACRO lc_rel_f1(tp, fp, fn) AS
    lc_rel_div(2.0 * lc_rel_div(tp, tp + fp) * lc_rel_div(tp, tp + fn),
               lc_rel_div(tp, tp + fp) + lc_rel_div(tp, tp + fn));
CREATE OR REPLACE MACRO lc_rel_balanced(tp, fn, tn, fp) AS
    (lc_rel_div(tp, tp + fn) + lc_rel_div(tn, tn + fp)) / 2.0;
CREATE OR REPLACE MACRO lc_rel_mcc(tp, fn, tn, fp) AS
    CASE WHEN CAST(tp + fp AS HUGEINT) * (tp + fn) * (tn + fp) * (tn + fn) = 0 THEN CAST(0.0 AS DOUBLE)
         ELSE CAST(CAST(tp AS HUGEINT) * tn - CAST(fp AS HUGEINT) * fn AS DOUBLE)
              / sqrt(CAST(CAST(tp + fp AS HUGEINT) * (tp + fn) * (tn + fp) * (tn + fn) AS DOUBLE)) END;
CREATE OR REPLACE MACRO lc_rel_wilson_low(k, n) AS
    CASE WHEN n > 0 THEN greatest(CAST(0.0 AS DOUBLE),
        ((k / n) + 1.959963984540054 ^ 2 / (2.0 * n)
         - 1.959963984540054 * sqrt((k / n) * (1.0 - k / n) / n + 1.959963984540054 ^ 2 / (4.0 * n * n)))
        / (1.0 + 1.959963984540054 ^ 2 / n)) END;
CREATE OR REPLACE MACRO lc_rel_wilson_high(k, n) AS
    CASE WHEN n > 0 THEN least(CAST(1.0 AS DOUBLE),
        ((k / n) + 1.959963984540054 ^ 2 / (2.0 * n)
         + 1.959963984540054 * sqrt((k / n) * (1.0 - k / n) / n + 1.959963984540054 ^ 2 / (4.0 * n * n)))
        / (1.0 + 1.959963984540054 ^ 2 / n)) END;
