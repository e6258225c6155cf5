-- macro: lc_mcnemar_p(b, c) -- exact two-sided McNemar p-value for b and c discordant pairs
-- spec: S8.9 (exact two-sided McNemar), S9 (case-level diff, significant policy drops)
-- method: the exact binomial test of min(b, c) successes in n = b + c trials at p = 1/2:
--         min(1, 2 * P[X <= min(b, c)]) (the two-sided test is symmetric at 1/2, so this equals
--         scipy.stats.binomtest(b, n, 0.5).pvalue); n = 0 gives 1.0. For n <= 33 the binomial
--         coefficients are exact HUGEINT factorials, so the value is the correctly rounded one;
--         above that each term is exp(lgamma ...) (relative error about 1e-12 at n = 2000).
-- params: none
CREATE OR REPLACE MACRO lc_mcnemar_p(b, c) AS CASE
    WHEN b + c = 0 THEN CAST(1.0 AS DOUBLE)
    WHEN b + c <= 33 THEN least(CAST(1.0 AS DOUBLE), 2.0 * CAST((
        -- (the range is empty unless this branch is taken: DuckDB may evaluate both branches)
        SELECT sum(factorial(CAST(b + c AS INTEGER))
                   // (factorial(CAST(k AS INTEGER)) * factorial(CAST(b + c - k AS INTEGER))))
        FROM range(0, CASE WHEN b + c <= 33 THEN least(b, c) + 1 ELSE 0 END) AS t(k)) AS DOUBLE)
        / pow(2.0, b + c))
    ELSE least(CAST(1.0 AS DOUBLE), 2.0 * (
        SELECT sum(exp(lgamma(b + c + 1) - lgamma(k + 1) - lgamma(b + c - k + 1) - (b + c) * ln(2.0)))
        FROM range(0, CASE WHEN b + c > 33 THEN least(b, c) + 1 ELSE 0 END) AS t(k)))
    END;
