-- macro: lc_exact_sum(x), lc_exact_sum_w(x, w) and lc_exact_mean_w(x, w) -- the exact sum for Spark (math.fsum
--        semantics), and the mean fsum / sum(w); the partial-sum family (lc_limb0_w ..., lc_limbs_total/_mean)
-- spec: S3.3 (evaluator means are fsum / n, bit for bit), S9.8 (order-independent sums)
-- engine: spark (overrides sql/macros/exact_sum.sql, read through laya_cases/query/engines/translate.py: the
--         same limbs and the same final rounding; docs/scale.md)
-- method: as sql/macros/exact_sum.sql, with two constructs that have no translation replaced:
--         DuckDB's trunc(v) of a double is v - v % 1.0 (fmod is exact in binary64, and so is the
--         difference, an integer-valued double), and the HUGEINT limb sums are DECIMAL(38,0) sums
--         (each limb is an integer below 2^63 in magnitude, cast exactly through BIGINT; 38 digits
--         hold 2^125). lc_exact_total is the same Python function (laya_cases.query.sql.exact_total),
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
-- the sum in parts, as sql/macros/exact_sum.sql: additive partial sums and their one rounding
CREATE OR REPLACE MACRO lc_limb0_w(x, w) AS sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t0(x)) * w END);
CREATE OR REPLACE MACRO lc_limb1_w(x, w) AS sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t1(x) - lc_shift52(lc_t0(x))) * w END);
CREATE OR REPLACE MACRO lc_limb2_w(x, w) AS sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t2(x) - lc_shift52(lc_t1(x))) * w END);
CREATE OR REPLACE MACRO lc_limb3_w(x, w) AS sum(CASE WHEN lc_fits(x) THEN lc_limb(lc_t3(x) - lc_shift52(lc_t2(x))) * w END);
CREATE OR REPLACE MACRO lc_rest_w(x, w) AS list([lc_rest(x), CAST(w AS DOUBLE)]) FILTER (WHERE lc_rest(x) <> 0);
CREATE OR REPLACE MACRO lc_nan_w(x, w) AS sum(CASE WHEN isnan(x) THEN w ELSE 0 END);
CREATE OR REPLACE MACRO lc_pinf_w(x, w) AS sum(CASE WHEN x = CAST('Infinity' AS DOUBLE) THEN w ELSE 0 END);
CREATE OR REPLACE MACRO lc_ninf_w(x, w) AS sum(CASE WHEN x = CAST('-Infinity' AS DOUBLE) THEN w ELSE 0 END);
CREATE OR REPLACE MACRO lc_rest_times(r, w) AS [[p[1], p[2] * CAST(w AS DOUBLE)] FOR p IN r];
CREATE OR REPLACE MACRO lc_rests(r) AS flatten(list(r) FILTER (WHERE r IS NOT NULL));
CREATE OR REPLACE MACRO lc_limbs_round(s0, s1, s2, s3, rest, nan, pinf, ninf, d) AS CASE
    WHEN nan > 0 OR (pinf > 0 AND ninf > 0) THEN CAST('NaN' AS DOUBLE)
    WHEN pinf > 0 THEN CAST('Infinity' AS DOUBLE)
    WHEN ninf > 0 THEN CAST('-Infinity' AS DOUBLE)
    ELSE lc_exact_total(s0, s1, s2, s3, rest, d)
    END;
CREATE OR REPLACE MACRO lc_exact_w(x, w, d) AS lc_limbs_round(lc_limb0_w(x, w), lc_limb1_w(x, w), lc_limb2_w(x, w),
    lc_limb3_w(x, w), lc_rest_w(x, w), lc_nan_w(x, w), lc_pinf_w(x, w), lc_ninf_w(x, w), d);
CREATE OR REPLACE MACRO lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, d) AS lc_limbs_round(
    sum(s0), sum(s1), sum(s2), sum(s3), lc_rests(rest), sum(nan), sum(pinf), sum(ninf), d);
CREATE OR REPLACE MACRO lc_limbs_total(s0, s1, s2, s3, rest, nan, pinf, ninf) AS
    lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, CAST(NULL AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_limbs_mean(s0, s1, s2, s3, rest, nan, pinf, ninf, w) AS
    lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, CAST(sum(w) AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_exact_sum_w(x, w) AS lc_exact_w(x, w, CAST(NULL AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_exact_mean_w(x, w) AS lc_exact_w(x, w, CAST(sum(w) AS DECIMAL(38, 0)));
CREATE OR REPLACE MACRO lc_exact_sum(x) AS lc_exact_sum_w(x, 1);
