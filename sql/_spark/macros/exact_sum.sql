-- macro: lc_exact_sum(x), lc_exact_sum_w(x, w) and lc_exact_mean_w(x, w) -- the exact sum for Spark (math.fsum
--        semantics), and the mean fsum / sum(w)
-- spec: S3.3 (evaluator means are fsum / n, bit for bit), S9.8 (order-independent sums)
-- engine: spark (overrides sql/macros/exact_sum.sql, read through laya_cases/engines/translate.py: the
--         same limbs and the same final rounding; docs/scale.md)
-- method: as sql/macros/exact_sum.sql, with two constructs that have no translation replaced:
--         DuckDB's trunc(v) of a double is v - v % 1.0 (fmod is exact in binary64, and so is the
--         difference, an integer-valued double), and the HUGEINT limb sums are DECIMAL(38,0) sums
--         (each limb is an integer below 2^63 in magnitude, cast exactly through BIGINT; 38 digits
--         hold 2^125). lc_exact_total is the same Python function (laya_cases.sql.exact_total),
--         registered as a Spark UDF: it rounds each group's few limb sums once.
-- params: none
CREATE OR REPLACE MACRO lc_fits(x) AS NOT isnan(x) AND abs(x) < CAST('1.0141204801825835e+31' AS DOUBLE);
CREATE OR REPLACE MACRO lc_trunc(v) AS v - v % CAST('1.0' AS DOUBLE);
CREATE OR REPLACE MACRO lc_t0(x) AS lc_trunc(x * CAST('9.094947017729282e-13' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t1(x) AS lc_trunc(x * CAST('4096.0' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t2(x) AS lc_trunc(x * CAST('1.8446744073709552e+19' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t3(x) AS lc_trunc(x * CAST('8.307674973655724e+34' AS DOUBLE));
CREATE OR REPLACE MACRO lc_shift52(t) AS t * CAST('4503599627370496.0' AS DOUBLE);
CREATE OR REPLACE MACRO lc_limb(t) AS CAST(CAST(t AS BIGINT) AS DECIMAL(38, 0));
CREATE OR REPLACE MACRO lc_rest(x) AS CASE
    WHEN lc_fits(x) THEN x - lc_t3(x) * CAST('1.2037062152420224e-35' AS DOUBLE)
    WHEN NOT isnan(x) AND abs(x) < CAST('Infinity' AS DOUBLE) THEN x END;
CREATE OR REPLACE MACRO lc_exact_w(x, w, d) AS CASE
    WHEN sum(CASE WHEN isnan(x) THEN w ELSE 0 END) > 0
      OR (sum(CASE WHEN x = CAST('Infinity' AS DOUBLE) THEN w ELSE 0 END) > 0
          AND sum(CASE WHEN x = CAST('-Infinity' AS DOUBLE) THEN w ELSE 0 END) > 0) THEN CAST('NaN' AS DOUBLE)
    WHEN sum(CASE WHEN x = CAST('Infinity' AS DOUBLE) THEN w ELSE 0 END) > 0 THEN CAST('Infinity' AS DOUBLE)
    WHEN sum(CASE WHEN x = CAST('-Infinity' AS DOUBLE) THEN w ELSE 0 END) > 0 THEN CAST('-Infinity' AS DOUBLE)
    ELSE lc_exact_total(
        sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t0(x)) * w END),
        sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t1(x) - lc_shift52(lc_t0(x))) * w END),
        sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t2(x) - lc_shift52(lc_t1(x))) * w END),
        sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t3(x) - lc_shift52(lc_t2(x))) * w END),
        list([lc_rest(x), CAST(w AS DOUBLE)]) FILTER (WHERE lc_rest(x) <> 0),
        d)
    END;
CREATE OR REPLACE MACRO lc_exact_sum_w(x, w) AS lc_exact_w(x, w, CAST(NULL AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_exact_mean_w(x, w) AS lc_exact_w(x, w, CAST(sum(w) AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_exact_sum(x) AS lc_exact_sum_w(x, 1);
