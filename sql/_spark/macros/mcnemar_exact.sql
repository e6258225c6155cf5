-- macro: lc_mcnemar_p(b, c) -- exact two-sided McNemar p-value for b and c discordant pairs, for Spark
-- spec: S8.9 (exact two-sided McNemar), S9 (case-level diff, significant policy drops)
-- engine: spark (overrides sql/macros/mcnemar_exact.sql, read through laya_cases/query/engines/translate.py;
--         docs/scale.md)
-- method: as sql/macros/mcnemar_exact.sql, min(1, 2 * P[X <= min(b, c)]) at p = 1/2, with the two
--         constructs that have no translation replaced: the subqueries over a correlated range()
--         (Spark's range() takes constants only), and factorial() above 20 (Spark's returns NULL).
--         n <= 33: sum over k <= min(b, c) of C(n, k), each built as the exact BIGINT product
--         C(n, i) = C(n, i - 1) * (n - i + 1) div i (C(33, 16) * 18 < 2^63), so the count is DuckDB's
--         HUGEINT sum. n > 33: lc_binomial_terms(n, m) (laya_cases/query/engines/udfs.py) sums
--         exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) - n * ln(2.0)) for k = 0..m in
--         range() order with the C library's lgamma, exp and log, the functions DuckDB calls.
-- params: none
CREATE OR REPLACE MACRO lc_mcnemar_p(b, c) AS CASE
    WHEN b + c = 0 THEN CAST(1.0 AS DOUBLE)
    WHEN b + c <= 33 THEN least(CAST(1.0 AS DOUBLE), 2.0 * CAST(
        aggregate(sequence(0, least(b, c)), CAST(0 AS BIGINT),
                  (s, k) -> s + aggregate(filter(sequence(0, k), i -> i > 0), CAST(1 AS BIGINT),
                                          (acc, i) -> acc * (b + c - i + 1) // i)) AS DOUBLE)
        / pow(2.0, b + c))
    ELSE least(CAST(1.0 AS DOUBLE), 2.0 * lc_binomial_terms(b + c, least(b, c)))
    END;
